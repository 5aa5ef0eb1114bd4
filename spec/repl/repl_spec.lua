-- repl_spec.lua — the REPL's Lua side with piped input: printing, commands, help, describe,
-- completion candidates, the debugger (post-mortem and torch.breakpoint).
--
-- Why: everything the REPL decides (what a value looks like, which names complete, what
-- ?torch.matmul says, which frame the debugger sees) is Lua and can be checked without a
-- terminal; spec/repl/terminal_spec.lua covers what needs one.
--
-- What: sessions run `ltorch -i` / `ltorch --debug script` with stdin from a file (no prompts
-- are printed without a terminal) and compare stdout/stderr; completion and describe are
-- called in-process.
--
-- How (from the repo root):  build/ltorch /usr/bin/busted spec/repl/repl_spec.lua
-- The binary is $LTORCH_BIN, default build/ltorch.

local torch = require "torch"
local complete = require "torch.repl.complete"

local R = require "spec.support.repl_run"
local q, tmpfile, run = R.q, R.tmpfile, R.run

teardown(R.cleanup)

describe("REPL printing", function()
  it("prints expressions without =, tables with cycles and depth limits", function()
    local out, err, rc = run("-i", table.concat({
      "t = {1, 2, name = 'x', deep = {a = {b = {c = {d = {}}}}}}",
      "t.self = t",
      "t",
      "torch.tensor({1.5, 2})",
      "torch.nn.Linear(3, 1)",
      "nil, true",
      "",
    }, "\n"))
    assert.are.equal(0, rc, err)
    assert.truthy(out:find('name = "x"', 1, true), out)
    assert.truthy(out:find("self = <cycle table: 0x", 1, true), out)
    assert.truthy(out:find("d = {}", 1, true) == nil and out:find("{...", 1, true), out)
    assert.truthy(out:find("tensor([1.5000, 2.0000])", 1, true), out)
    assert.truthy(out:find("Linear(in_features=3, out_features=1, bias=True)", 1, true), out)
    assert.truthy(out:find("\nnil\ttrue\n", 1, true), out)
  end)

  it("continues unfinished input and reports errors with the line", function()
    local out, err, rc = run("-i", "function f(a)\n  return a * 2\nend\nf(21)\nerror('bad')\n")
    assert.are.equal(0, rc, err)
    assert.truthy(out:find("\n42\n", 1, true), out)
    assert.truthy(err:find("ltorch: stdin:1: bad\nstack traceback:", 1, true), err)
  end)
end)

describe("REPL commands and help", function()
  it("runs :time, :mem, :who, :help and ?torch.matmul", function()
    local out, err, rc = run("-i", table.concat({
      "x = torch.ones(4, 4)",
      ":time x:sum()",
      ":mem",
      ":who",
      "?torch.matmul",
      "help(x)",
      ":nope",
      ":help",
      ":q",
      "'not reached'",
      "",
    }, "\n"))
    assert.are.equal(0, rc, err)
    assert.truthy(out:find("tensor(16.)\ntime: ", 1, true), out)
    assert.truthy(out:find("live tensor memory: ", 1, true), out)
    assert.truthy(out:find("tensors reachable from globals: 1, 64 B", 1, true), out)
    assert.truthy(out:find("x\tcdata\tTensor[4, 4] float32 cpu min=1 max=1 mean=1 nan=0 inf=0", 1, true), out)
    assert.truthy(out:find("torch.matmul(Tensor self, Tensor other) -> Tensor", 1, true), out)
    assert.truthy(out:find("pytorch.org/docs/stable/generated/torch.matmul.html", 1, true), out)
    assert.truthy(out:find("Tensor shape=[4, 4] dtype=torch.float32 device=cpu", 1, true), out)
    assert.truthy(err:find("unknown command ':nope'", 1, true), err)
    assert.falsy(out:find("not reached", 1, true), out)
  end)
end)

describe("Tensor:describe", function()
  it("summarises shape, dtype, statistics, NaN/Inf and grad", function()
    local x = torch.tensor({ { 1, 0 / 0 }, { 1 / 0, 4 } })
    local d = x:describe()
    assert.truthy(d:find("Tensor shape=[2, 2] dtype=torch.float32 device=cpu", 1, true), d)
    assert.truthy(d:find("min=1 max=4 mean=2.5 std=2.121", 1, true), d)
    assert.truthy(d:find("nan=1 inf=1 requires_grad=false grad_fn=None", 1, true), d)
    local y = (torch.ones(3, { requires_grad = true }) * 2):sum()
    assert.truthy(y:describe():find("requires_grad=true grad_fn=<SumBackward0>", 1, true), y:describe())
    assert.truthy(torch.zeros(0):describe():find("(empty)", 1, true))
    assert.truthy(torch.tensor({ 1, 2, 3 }):describe():find("dtype=torch.int64", 1, true))
  end)
end)

describe("completion candidates", function()
  it("completes torch members including generated ops", function()
    local c = complete.candidates("torch.ma", "torch.ma", 0, { torch = torch })
    local set = {}
    for _, v in ipairs(c) do set[v] = true end
    assert.truthy(set["torch.matmul"] and set["torch.max"] and set["torch.maximum"], table.concat(c, " "))
    assert.falsy(set["torch._make_dual"])
  end)

  it("completes Tensor methods, module members, globals and locals", function()
    local env = setmetatable({ torch = torch, x = torch.ones(2), m = torch.nn.Linear(2, 2) }, { __index = _G })
    local c = table.concat(complete.candidates("x:logadd", "", 0, env), " ")
    assert.truthy(c:find("x:logaddexp", 1, true), c)
    c = table.concat(complete.candidates("x.sh", "", 0, env), " ")
    assert.truthy(c:find("x.shape", 1, true), c)
    c = table.concat(complete.candidates("m.", "", 0, env), " ")
    assert.truthy(c:find("m.weight", 1, true) and c:find("m.forward", 1, true), c)
    c = table.concat(complete.candidates("m:param", "", 0, env), " ")
    assert.truthy(c:find("m:parameters", 1, true), c)
    c = table.concat(complete.candidates("pri", "", 0, env), " ")
    assert.are.equal("print", c)
    c = table.concat(complete.candidates("torch.linalg.no", "", 0, env), " ")
    assert.truthy(c:find("torch.linalg.norm", 1, true), c)
  end)
end)

describe("debugger", function()
  local script = [[
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
]]

  it("--debug stops at the failing frame with its locals and upvalues", function()
    local out, err, rc = run("--debug " .. q(tmpfile(script)),
      "a\nb\nscale\n:bt\n:up\nm\n:locals\n:down\nb = 7\n:locals\n:c\n")
    assert.are.equal(1, rc, err)
    assert.truthy(out:find("post%-mortem at [^\n]*:4 in function 'inner'"), out)
    assert.truthy(out:find("\n21\n63\n3\n", 1, true), out)
    assert.truthy(out:find("> #1 [^\n]* in function 'inner'\n  #2 [^\n]* in function 'outer'"), out)
    assert.truthy(out:find("#2 [^\n]*:8 in function 'outer'\n21\n"), out)
    assert.truthy(out:find("n = 20\nm = 21\n", 1, true), out)
    assert.truthy(out:find("b = 7\n", 1, true), out)
    assert.truthy(err:find("ltorch: [^\n]*boom 63\nstack traceback:"), err)
  end)

  it("-i after a failing script also enters the post-mortem", function()
    local out, _, rc = run("-i " .. q(tmpfile(script)), "a\n")
    assert.are.equal(1, rc)
    assert.truthy(out:find("post-mortem at", 1, true) and out:find("\n21\n", 1, true), out)
  end)

  it("torch.breakpoint() stops in the caller and continues", function()
    local bp = tmpfile([[
local torch = require "torch"
local function f(x)
  local y = x + 1
  torch.breakpoint()
  print("after", y)
end
f(41)
]])
    local out, err, rc = run(q(bp), "y\ny = 100\n:c\n")
    assert.are.equal(0, rc, err)
    assert.truthy(out:find("breakpoint at [^\n]*:4 in function 'f'"), out)
    assert.truthy(out:find("\n42\nafter\t100\n", 1, true), out)
  end)
end)
