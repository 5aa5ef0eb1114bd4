-- terminal_spec.lua — the REPL driven in a real terminal (tmux), as a user types at it.
--
-- Why: line editing, Tab completion, persistent history, Ctrl-C at a running line and the
-- post-mortem prompt only exist on a terminal; piped stdin (spec/repl/repl_spec.lua) cannot
-- show them.
--
-- What: each test starts `ltorch` in a detached tmux session on a private server socket
-- (80x50 pane, LTORCH_HISTORY in a temp file, NO_COLOR unless the test checks colours),
-- types with send-keys, and polls capture-pane until the expected text shows (10 s limit):
-- completion of `torch.ma<TAB>`, a tensor and a module printed, history across two runs,
-- `ltorch --debug` stopping in a failing function with its locals readable, Ctrl-C
-- interrupting a running loop without ending the REPL, colours on a terminal; issue #30:
-- every kind of value printed at the prompt (builtins, raising metatables, huge tables),
-- :graph (and its tree of the autograd graph: parameter names, shared nodes, the depth
-- limit), the debugger opening in the user's frame with library frames folded, :locals
-- summaries, :p, :where, :frames all, and help from PyTorch's docstrings (?name, help()).
--
-- How (from the repo root; tmux comes from scripts/setup.sh):
--     build/ltorch /usr/bin/busted spec/repl/terminal_spec.lua
-- The binary is $LTORCH_BIN, default build/ltorch. Without tmux the tests are pending.

local BIN = os.getenv("LTORCH_BIN") or "build/ltorch"
local SOCKET = ("ltorch-spec-%d-%d"):format(os.time(), math.random(1, 1e6))
local temps = {}

local function q(s) return "'" .. tostring(s):gsub("'", [['\'']]) .. "'" end

local function sh(cmd)
  local p = io.popen(cmd .. " 2>&1")
  local out = p:read("*a")
  p:close()
  return out
end

local function sleep(s) os.execute("sleep " .. s) end

local function tmpname(content)
  local name = os.tmpname()
  if content then
    local f = assert(io.open(name, "w"))
    f:write(content)
    f:close()
  else
    os.remove(name)
  end
  temps[#temps + 1] = name
  return name
end

local function tmux(args) return sh("tmux -L " .. SOCKET .. " " .. args) end

local target, sessions = "repl0", 0

-- Starts cmd in a fresh pane; the pane stays after cmd exits and shows its exit status.
local function start(cmd, env)
  local old = target
  sessions = sessions + 1
  target = "repl" .. sessions
  local full = ("env -u LUA_INIT %s %s; echo EXIT=$?; sleep 60"):format(env or "NO_COLOR=1", cmd)
  tmux("new-session -d -x 80 -y 50 -s " .. target .. " " .. q(full))
  tmux("kill-session -t " .. old)  -- after the new one exists, so the server stays up
end

local function screen(escapes)
  return tmux("capture-pane -p -J " .. (escapes and "-e " or "") .. "-S -300 -t " .. target)
end

-- Waits until the pane shows `text` (plain find) `count` times; returns the screen.
local function wait_for(text, count, timeout)
  local deadline = os.time() + (timeout or 10)
  local s
  repeat
    s = screen()
    local n, from = 0, 1
    while true do
      local i, j = s:find(text, from, true)
      if not i then break end
      n, from = n + 1, j + 1
    end
    if n >= (count or 1) then return s end
    sleep(0.1)
  until os.time() > deadline
  error(("timed out waiting for %q; the screen was:\n%s"):format(text, s), 2)
end

local function type_keys(text) tmux("send-keys -t " .. target .. " -l " .. q(text)) end
local function key(...) tmux("send-keys -t " .. target .. " " .. table.concat({ ... }, " ")) end
local function line(text) type_keys(text); sleep(0.1); key("Enter") end

local has_tmux = sh("command -v tmux") ~= ""

describe("REPL on a terminal", function()
  local history = tmpname()
  local ltorch = ("%s -i"):format(BIN)
  local env = "NO_COLOR=1 LTORCH_HISTORY=" .. q(history)

  teardown(function()
    tmux("kill-server")
    for _, f in ipairs(temps) do os.remove(f) end
  end)

  if not has_tmux then
    pending("tmux is not installed (scripts/setup.sh installs it)")
    return
  end

  it("completes torch.ma<TAB>, prints a tensor and a module", function()
    start(ltorch, env)
    wait_for("> ")
    type_keys("torch.ma")
    key("Tab"); sleep(0.3); key("Tab")
    local s = wait_for("torch.matmul")
    assert.truthy(s:find("torch.max", 1, true), s)
    assert.truthy(s:find("torch.masked_fill", 1, true), s)
    type_keys("tm"); key("Tab")  -- now unique: the line becomes torch.matmul
    wait_for("> torch.matmul")
    key("C-u")
    line("torch.tensor({{1, 2}, {3, 4}})")
    wait_for("tensor([[1, 2],")
    wait_for("        [3, 4]])")
    line("torch.nn.Sequential(torch.nn.Linear(4, 2), torch.nn.ReLU())")
    s = wait_for("(0): Linear(in_features=4, out_features=2, bias=True)")
    assert.truthy(s:find("(1): ReLU()", 1, true), s)
    line("x = torch.ones(2, 3)")
    type_keys("x:transp"); key("Tab")  -- a Tensor method
    wait_for("x:transpose")
    key("C-u")
    line(":q")
    wait_for("EXIT=0")
  end)

  it("keeps history across restarts", function()
    start(ltorch, env)
    wait_for("> ")
    line("history_marker = 4321")
    wait_for("> ", 2)
    line(":q")
    wait_for("EXIT=0")
    start(ltorch, env)
    wait_for("> ")
    key("Up"); key("Up")  -- ":q", then the line before it
    wait_for("> history_marker = 4321")
    key("Enter")
    line("history_marker + 1")
    wait_for("4322")
    line(":q")
    local f = assert(io.open(history))
    local text = f:read("*a")
    f:close()
    assert.truthy(text:find("history_marker = 4321", 1, true), text)
  end)

  it("interrupts a running loop with Ctrl-C and keeps going", function()
    start(ltorch, env)
    wait_for("> ")
    line("for i = 1, 1e13 do local y = i * 2 end")
    sleep(1)
    key("C-c")
    wait_for("interrupted!")
    wait_for("> ", 2)
    sleep(0.3)
    line("40 + 2")
    wait_for("42")
    type_keys("abandoned line"); sleep(0.2); key("C-c")  -- Ctrl-C at the prompt drops the line
    sleep(0.3)
    line("'still here'")
    wait_for("still here", 2)
    line(":q")
    wait_for("EXIT=0")
  end)

  it("opens the post-mortem debugger at the failing frame (--debug)", function()
    local script = tmpname([[
local scale = 3
local function inner(a)
  local b = a * scale
  error("boom " .. b)
end
local function outer(n)
  local m = n + 1
  inner(m)
end
outer(20)
]])
    start(BIN .. " --debug " .. q(script), env)
    wait_for("post-mortem at")
    wait_for("(debug) ")
    line("a + b")
    wait_for("84")
    line("scale")  -- an upvalue
    wait_for("(debug) ", 3)
    line(":bt")
    wait_for("in function 'outer'")
    line(":up")
    wait_for("#2 ")
    line("m * 100")
    wait_for("2100")
    line(":locals")
    wait_for("n = 20")
    line(":c")
    local s = wait_for("EXIT=1")
    assert.truthy(s:find("boom 63", 1, true), s)
    assert.truthy(s:find("stack traceback:", 1, true), s)
  end)

  it("prints every kind of value typed at the prompt without crashing (issue #30)", function()
    start(ltorch, env)
    wait_for("> ")
    line("type")
    wait_for("builtin: type")
    line("print")
    wait_for("builtin: print")
    line("setmetatable({a = 1}, {__tostring = function() error('nope') end})")
    wait_for("<__tostring failed: stdin:1: nope> { a = 1 }")
    line("setmetatable({x = 1}, {__index = error, __pairs = error, __len = error})")
    wait_for("{ x = 1 }")
    line("coroutine.create(print)")
    wait_for("(suspended)")
    line("big = {}; for i = 1, 1e5 do big[i] = i end")
    line("big")
    wait_for("... 99900 more")
    line("error(setmetatable({}, {__tostring = function() error('worse') end}))")
    wait_for("(error object whose __tostring failed")
    line("x = torch.ones(2, {requires_grad = true}); y = (x * 3):sum()")
    line(":graph y")
    wait_for("made by <SumBackward0>")
    line(":graph x")
    wait_for("a leaf that requires grad")
    line("'alive'")
    local s = wait_for("alive", 2)
    assert.falsy(s:find("(REPL)", 1, true), s)
    line(":q")
    wait_for("EXIT=0")
  end)

  it("--debug opens in the user's frame, folds library frames, summarises locals (issue #30)", function()
    local script = tmpname([[
local torch = require "torch"
local function step(model, x)
  local w = torch.ones(3, 4)
  local big = {}
  for i = 1, 500 do big[i] = i end
  local show = print
  local h = model(x)
  local y = h:matmul(w)
  return y
end
step(torch.nn.Linear(2, 2), torch.ones(2, 2))
]])
    start(BIN .. " --debug " .. q(script), env)
    local s = wait_for("(debug) ")
    assert.truthy(s:find("post%-mortem at [^\n]*:8 in function 'step'"), s)
    assert.truthy(s:find("(2 library frames folded: :frames all shows them)", 1, true), s)
    assert.truthy(s:find("->   8    local y = h:matmul(w)", 1, true), s)
    line(":locals")
    wait_for("show = builtin: print")
    s = wait_for("torch (upvalue) = module \"torch\"")
    assert.truthy(s:find("w = Tensor[3, 4] float32 cpu min=1 max=1 mean=1 nan=0 inf=0", 1, true), s)
    assert.truthy(s:find("model = Linear (nn module): 6 parameters in 2 tensors", 1, true), s)
    assert.truthy(s:find("big = table, 500 fields", 1, true), s)
    assert.falsy(s:find("(REPL)", 1, true), s)
    line(":p w")
    wait_for("Tensor shape=[3, 4] dtype=torch.float32 device=cpu")
    line(":where h")
    wait_for("made by <AddmmBackward0>")
    line(":bt")
    wait_for("... 2 library frames (:frames all)")
    line(":frames all")
    wait_for("in function 'check'")
    line(":frame 2")
    wait_for("#2 ")
    line(":frames user")
    line(":up 2")  -- from #2 (check) past the user's #3 to #4
    wait_for("\n#4 ")
    line(":c")
    s = wait_for("EXIT=1")
    assert.truthy(s:find("mat1 and mat2 shapes cannot be multiplied", 1, true), s)
  end)

  it(":graph prints the autograd graph above a tensor as a tree (issue #30)", function()
    start(ltorch, env)
    wait_for("> ")
    line("model = torch.nn.Linear(3, 2); x = torch.ones(4, 3)")
    line("loss = torch.nn.functional.mse_loss(model(x):relu(), torch.zeros(4, 2))")
    line(":graph loss")
    local s = wait_for("          AccumulateGrad -> model.weight: Tensor[2, 3] float32 cpu requires_grad")
    assert.truthy(s:find("\n    MseLossBackward0\n      ReluBackward0\n        AddmmBackward0\n"
      .. "          AccumulateGrad -> model.bias: Tensor[2] float32 cpu requires_grad\n", 1, true), s)
    line("w = torch.ones(3, {requires_grad = true}); h = w:exp(); y = (h * h + h):sum()")
    line(":graph y")
    s = wait_for("        ExpBackward0 (see above)")
    assert.truthy(s:find("            AccumulateGrad -> w: Tensor[3] float32 cpu requires_grad", 1, true), s)
    line("z = w; for i = 1, 40 do z = z * 2 end")
    line(":graph z")
    wait_for("below the depth limit of 32 levels)")
    line(":q")
    wait_for("EXIT=0")
  end)

  it("?name and help() print PyTorch's documentation (issue #30)", function()
    start(ltorch, env)
    wait_for("> ")
    line("?torch.optim.AdamW")
    wait_for("Implements AdamW algorithm, where weight decay does not accumulate in the")
    local s = wait_for("    params (iterable): iterable of parameters")
    assert.truthy(s:find("torch.optim.AdamW(params, {lr = 0.001", 1, true), s)
    key("C-l")  -- a clear screen for the next answer
    line("help(torch.nn.Linear)")
    wait_for("Applies an affine linear transformation to the incoming data")
    line("?torch.matmul")
    wait_for("Matrix product of two tensors.")
    s = wait_for("ATen: torch.matmul(Tensor self, Tensor other) -> Tensor")
    assert.falsy(s:find("(REPL)", 1, true), s)
    line(":q")
    wait_for("EXIT=0")
  end)

  it("colours values on a terminal unless NO_COLOR is set", function()
    start(ltorch, "LTORCH_HISTORY=" .. q(history))
    wait_for("> ")
    line("12345")
    wait_for("12345", 2)
    assert.truthy(screen(true):find("\27%[36m12345"), screen(true))
    line(":q")
    start(ltorch, env)
    wait_for("> ")
    line("12345")
    wait_for("12345", 2)
    assert.falsy(screen(true):find("\27%[36m12345"), screen(true))
    line(":q")
  end)
end)
