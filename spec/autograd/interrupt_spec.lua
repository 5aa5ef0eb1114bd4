--[[
  spec/autograd/interrupt_spec.lua — an error or interrupt at any instruction of a backward that
  runs Lua (a torch.autograd.Function, a tensor hook, a Function whose backward runs backward)
  leaves autograd working, and the process exits (lua/torch/autograd_function.lua `run`,
  bindings/lt_function.cpp lt_autograd_unwind).

  How: a child ltorch runs each backward under a count hook that raises "interrupted!" after N
  VM instructions, N swept from 1 up (every instruction of the service loop is hit), in two
  kinds: once (as Ctrl-C does) and every N instructions while library code runs (a host's
  watchdog). After each, a fresh backward through the same kind of graph must give the right
  gradient with grad mode restored. The child runs under `timeout`, so a wedged engine or a hang
  at exit fails the spec instead of hanging it. Then the CLI: SIGINT during a loop of backwards
  through a Lua Function, 50 times: every run ends promptly with "interrupted!". Then the REPL:
  one session fed through a FIFO, 50 rounds of SIGINT during such a loop, each followed by a
  backward that must give the right gradient with grad mode on; the REPL then exits normally.

  Run:  build/ltorch /usr/bin/busted spec/autograd/interrupt_spec.lua
]]
local BIN = os.getenv("LTORCH_BIN") or "build/ltorch"

local function q(s) return "'" .. tostring(s):gsub("'", [['\'']]) .. "'" end

local function script(code)
  local name = os.tmpname()
  local f = assert(io.open(name, "w"))
  f:write(code)
  f:close()
  return name
end

-- Runs a shell command; returns its combined output and exit status.
local function sh(cmd)
  local p = assert(io.popen("(" .. cmd .. ") 2>&1; echo \"__rc=$?\""))
  local out = p:read("*a")
  p:close()
  return (out:gsub("__rc=%d+\n?$", "")), tonumber(out:match("__rc=(%d+)\n?$"))
end

local SWEEP = [==[
local torch = require "torch"
local kind, upto = arg[1], tonumber(arg[2])
local Sq = torch.autograd.Function("Sq")
function Sq.forward(ctx, x) ctx:save_for_backward(x); return x * x end
function Sq.backward(ctx, g) local x = unpack(ctx.saved_tensors); return g * 2 * x end
-- a Function whose backward runs a backward of its own (a nested job)
local Nest = torch.autograd.Function("Nest")
function Nest.forward(ctx, x) ctx:save_for_backward(x); return x * 3 end
function Nest.backward(ctx, g)
  local x = unpack(ctx.saved_tensors)
  local z = torch.enable_grad(function()
    local u = x:detach():requires_grad_(true)
    Sq.apply(u):sum():backward()
    return u.grad
  end)
  return g * 3 + z * 0
end
local graphs = {
  fn = function(x) return Sq.apply(x):sum(), 2 end,
  hook = function(x)
    local y = x * 1
    y:register_hook(function(g) return g * 5 end)
    return y:sum(), 5
  end,
  nested = function(x) return Nest.apply(x):sum(), 3 end,
}
local me = debug.getinfo(1, "S").source
local function stop() debug.sethook(); error("interrupted!") end
local function watchdog()
  if debug.getinfo(2, "S").source ~= me then error("interrupted!") end
end
local hit = 0
for _, g in ipairs({ "fn", "hook", "nested" }) do
  for n = 1, upto do
    local x = torch.ones(3, { requires_grad = true })
    local y = graphs[g](x)
    local ok = pcall(function()
      if kind == "once" then debug.sethook(stop, "", n) else debug.sethook(watchdog, "", n) end
      y:backward()
      debug.sethook()
    end)
    debug.sethook()
    if not ok then hit = hit + 1 end
    assert(torch.is_grad_enabled(), ("grad mode left off (%s, N=%d)"):format(g, n))
    local x2 = torch.ones(2, { requires_grad = true })
    local y2, slope = graphs[g](x2)
    y2:backward()
    local got = x2.grad:sum():item()
    assert(got == 2 * slope, ("%s after an interrupt at N=%d: gradient sum %g, expected %g"):format(g, n, got, 2 * slope))
  end
end
print("interrupted " .. hit)
]==]

local LOOP = [==[
local torch = require "torch"
local Sq = torch.autograd.Function("Sq")
function Sq.forward(ctx, x) ctx:save_for_backward(x); return x * x end
function Sq.backward(ctx, g) local x = unpack(ctx.saved_tensors); return g * 2 * x end
local f = io.open(arg[1], "w"); f:write("ready"); f:close()
while true do
  local x = torch.ones(4, { requires_grad = true })
  Sq.apply(x):sum():backward()
end
]==]

-- Definitions typed into the REPL first: spin(marker) loops over backwards through a Lua
-- Function after writing the marker; check() is a fresh backward's gradient sum and grad mode.
local REPL_SETUP = [==[
Sq = torch.autograd.Function("Sq")
function Sq.forward(ctx, x) ctx:save_for_backward(x); return x * x end
function Sq.backward(ctx, g) local x = unpack(ctx.saved_tensors); return g * 2 * x end
function spin(m) local f = io.open(m, "w"); f:write("ready"); f:close(); while true do Sq.apply(torch.ones(4, { requires_grad = true })):sum():backward() end end
function check() local x = torch.ones(3, { requires_grad = true }); Sq.apply(x):sum():backward(); return x.grad:sum():item(), torch.is_grad_enabled() end
]==]

describe("interrupting a backward that runs Lua", function()
  local sweep = script(SWEEP)
  teardown(function() os.remove(sweep) end)

  for _, kind in ipairs({ "once", "watchdog" }) do
    it("leaves autograd working after an error at any instruction (" .. kind .. ")", function()
      local out, rc = sh("timeout -s KILL 240 " .. q(BIN) .. " " .. q(sweep) .. " " .. kind .. " 1200")
      assert.are.equal(0, rc, out)
      local hit = tonumber(out:match("interrupted (%d+)"))
      assert.is_true(hit ~= nil and hit > 100, out)
    end)
  end

  it("Ctrl-C during backward through a Lua Function ends the script promptly, 50 times", function()
    local loop = script(LOOP)
    local marker = os.tmpname()
    finally(function() os.remove(loop); os.remove(marker) end)
    for i = 1, 50 do
      os.remove(marker)
      local out, rc = sh(table.concat({
        q(BIN) .. " " .. q(loop) .. " " .. q(marker) .. " </dev/null & p=$!",
        "(sleep 20; kill -KILL $p) >/dev/null 2>&1 & w=$!",
        "i=0; while [ ! -s " .. q(marker) .. " ] && [ $i -lt 400 ]; do sleep 0.02; i=$((i+1)); done",
        "sleep 0.0" .. (i % 10) .. "; kill -INT $p",
        "wait $p; rc=$?",
        "kill $w 2>/dev/null",
        "exit $rc",
      }, "\n"))
      assert.are.equal(1, rc, ("run %d: %s"):format(i, out))
      assert.truthy(out:find("interrupted!", 1, true), ("run %d: %s"):format(i, out))
    end
  end)

  it("Ctrl-C during backward through a Lua Function at the REPL, 50 times: the REPL survives", function()
    local dir = os.tmpname()
    os.remove(dir)
    finally(function() os.execute("rm -rf " .. q(dir)) end)
    local setup = dir .. "/setup.lua"
    os.execute("mkdir -p " .. q(dir))
    local f = assert(io.open(setup, "w"))
    f:write(REPL_SETUP)
    f:close()
    -- The REPL reads a FIFO the shell keeps open; each round starts spin(), waits for its marker,
    -- sends SIGINT, then asks for check(). A watchdog bounds the whole session.
    local out, rc = sh(table.concat({
      "b=$(cd \"$(dirname " .. q(BIN) .. ")\" && pwd)/$(basename " .. q(BIN) .. ")",   -- BIN may be relative
      "cd " .. q(dir) .. " && mkfifo in",
      "trap '' PIPE",   -- a REPL that died must fail the spec with its output, not kill this shell
      "\"$b\" -i < in > out.txt 2>&1 & p=$!",
      "(sleep 240; kill -KILL $p) >/dev/null 2>&1 & w=$!",
      "exec 3<> in",   -- read-write: never blocks, even if the REPL failed to start
      "echo 'torch = require \"torch\"; dofile(\"setup.lua\")' >&3",
      "for i in $(seq 1 50); do",
      "  rm -f m; echo 'spin(\"m\")' >&3",
      "  j=0; while [ ! -s m ] && [ $j -lt 500 ]; do sleep 0.02; j=$((j+1)); done",
      "  sleep 0.0$((i % 10)); kill -INT $p",
      "  echo \"print('CHECK', $i, check())\" >&3",
      "done",
      "echo 'os.exit(0)' >&3; exec 3>&-",
      "wait $p; rc=$?",
      "kill $w 2>/dev/null",
      "cat out.txt",
      "exit $rc",
    }, "\n"))
    assert.are.equal(0, rc, out)
    local interrupted, checks = 0, 0
    for _ in out:gmatch("interrupted!") do interrupted = interrupted + 1 end
    for i, sum, mode in out:gmatch("CHECK%s+(%d+)%s+(%S+)%s+(%S+)") do
      assert.are.same({ "6", "true" }, { sum, mode }, "round " .. i .. ":\n" .. out)
      checks = checks + 1
    end
    assert.are.equal(50, interrupted, out)
    assert.are.equal(50, checks, out)
  end)
end)
