-- pretty_spec.lua — the REPL's printer (torch.repl.pretty) and the one-line summaries
-- (torch.repl.summary) fed every kind of Lua value.
--
-- Why: whatever the user types is printed; a value the printer cannot handle used to crash
-- the prompt (`type` at the prompt: "pretty.lua:46: attempt to concatenate a nil value").
--
-- What: builtins, Lua functions, cdata, userdata, threads, cycles, huge/wide/deep tables,
-- long strings, odd keys, tables whose metatable __tostring/__index/__pairs/__len raise or
-- lie, tensors, modules — each must format to a string (never raise) that says what it is.
--
-- How (from the repo root):  build/ltorch /usr/bin/busted spec/repl/pretty_spec.lua

local torch = require "torch"
local ffi = require "ffi"
local pretty = require "torch.repl.pretty"
local summary = require "torch.repl.summary"

local function raising(name) return function() error(name .. " raised", 0) end end

local function has(s, text) assert.truthy(s:find(text, 1, true), s) end

describe("pretty.format", function()
  it("names builtins (LuaJIT fast functions print as builtin#N)", function()
    assert.are.equal("builtin: type", pretty.format(type))
    assert.are.equal("builtin: print", pretty.format(print))
    assert.are.equal("builtin: string.format", pretty.format(string.format))
    assert.are.equal("builtin: coroutine.wrap", pretty.format(coroutine.wrap))
    has(pretty.format({ f = tostring }), "f = builtin: tostring")
  end)

  it("prints Lua functions, cdata, userdata and threads", function()
    has(pretty.format(function() end), "function: ")
    has(pretty.format(ffi.new("int[3]")), "cdata<int [3]>: 0x")
    has(pretty.format(io.stdout), "file (0x")
    has(pretty.format(newproxy(true)), "userdata: 0x")
    has(pretty.format(coroutine.create(function() end)), "(suspended)")
    local dead = coroutine.create(function() end)
    coroutine.resume(dead)
    has(pretty.format(dead), "(dead)")
  end)

  it("marks cycles, limits depth, width and the total shown", function()
    local t = {}
    t.self, t[t] = t, t
    has(pretty.format(t), "<cycle table: 0x")
    local deep = {}
    local cur = deep
    for _ = 1, 10000 do cur.n = {}; cur = cur.n end
    has(pretty.format(deep), "{...1 field}")
    local big = {}
    for i = 1, 100000 do big["k" .. i] = i end
    has(pretty.format(big), "... 99900 more")
    local wide = {}
    for i = 1, 100 do wide[i] = {} for j = 1, 100 do wide[i][j] = { j } end end
    assert.truthy(#pretty.format(wide) < 200000)
    has(pretty.format({ string.rep("x", 1000) }), "...(1000 bytes)")
  end)

  it("prints keys of every type", function()
    local s = pretty.format({ [true] = 1, [1.5] = 2, [print] = 3, [{}] = 4, ["a b"] = 5, ["end"] = 6 })
    has(s, "[true] = 1")
    has(s, "[1.5] = 2")
    has(s, "[builtin: print] = 3")
    has(s, '["a b"] = 5')
    has(s, '["end"] = 6')
  end)

  it("survives metatables that raise or lie", function()
    has(pretty.format(setmetatable({ a = 1 }, { __tostring = raising("__tostring") })),
      "<__tostring failed: __tostring raised> { a = 1 }")
    has(pretty.format(setmetatable({}, { __tostring = function() return 5 end })), "__tostring returned a number")
    local hostile = setmetatable({ x = 1 }, { __index = raising("__index"), __pairs = raising("__pairs"),
      __len = raising("__len"), __lt = raising("__lt"), __eq = raising("__eq"), __concat = raising("__concat") })
    assert.are.equal("{ x = 1 }", pretty.format(hostile))
    has(pretty.format({ [hostile] = 1, [setmetatable({}, { __tostring = raising("k") })] = 2 }), "= 2")
    local locked = setmetatable({ y = 2 }, { __metatable = "locked", __tostring = raising("locked") })
    assert.are.equal("{ y = 2 }", pretty.format(locked))
    local ud = newproxy(true)
    getmetatable(ud).__tostring = raising("ud")
    has(pretty.format(ud), "<__tostring failed: ud raised>")
  end)

  it("prints tensors and modules through their own repr", function()
    has(pretty.format(torch.tensor({ 1.5, 2 })), "tensor([1.5000, 2.0000])")
    has(pretty.format(torch.nn.Linear(3, 1)), "Linear(in_features=3, out_features=1, bias=True)")
    has(pretty.format(torch.nn.Linear), "<class Linear>")
    local sparse = pretty.format(torch.tensor({ { 1, 2 } }):to_sparse())  -- a repr that may fail
    assert.truthy(sparse:find("indices", 1, true) or sparse:find("<Tensor[1, 2] torch.int64: cannot print: ", 1, true), sparse)
  end)
end)

describe("summary.line", function()
  it("summarises tensors with shape, dtype, device, grad and statistics", function()
    local x = torch.tensor({ 1, 0 / 0, 1 / 0, 3 }, { requires_grad = true })
    assert.are.equal("Tensor[4] float32 cpu requires_grad min=1 max=3 mean=2 nan=1 inf=1", summary.line(x))
    local y = x * 2
    has(summary.line(y), "grad_fn=<MulBackward0>")
    has(summary.line(torch.zeros(0)), "Tensor[0] float32 cpu")
  end)

  it("gives modules as class and parameter count, big tables as a count", function()
    assert.are.equal("Linear (nn module): 10 parameters in 2 tensors", summary.line(torch.nn.Linear(4, 2)))
    has(summary.line(torch), 'module "torch" (table, ')
    local big = {}
    for i = 1, 500 do big[i] = i end
    assert.are.equal("table, 500 fields", summary.line(big))
    assert.are.equal("{ 1, 2, 3 }", summary.line({ 1, 2, 3 }))
    assert.are.equal("builtin: print", summary.line(print))
    assert.are.equal('"text"', summary.line("text"))
    local opt = torch.optim.AdamW(torch.nn.Linear(2, 2):parameters(), { lr = 0.01 })
    assert.are.equal("AdamW (optimizer): 1 param group, lr=0.01", summary.line(opt))
  end)

  it("never raises", function()
    local bad = setmetatable({}, { __tostring = raising("__tostring") })
    assert.are.equal("string", type(summary.line(bad)))
    assert.are.equal("string", type(summary.line(setmetatable({ _modules = {}, _class = {} }, {}))))
  end)
end)
