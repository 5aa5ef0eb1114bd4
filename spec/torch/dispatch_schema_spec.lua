--[[
  spec/torch/dispatch_schema_spec.lua — operators are bound against the schema the loaded
  libtorch registered, and a call that does not fit it is refused before it reaches the kernel.

  torch._dispatch takes from the generated op table (lua/torch/_gen/ops.lua, made from one
  libtorch's native_functions.yaml) which names exist and how they are exposed, and takes the
  arguments from the library itself (lt_op_schema). Under the libtorch the table came from, the
  two must parse to the same thing for every bound overload; this is checked op by op. Under
  another libtorch (a PyTorch 2.x one on a GPU machine), an overload whose arguments changed is
  then called with the list that library expects. The C side refuses a call with another
  argument count (the boxed kernel would read past the stack), whoever packed it.

  Run:  build/ltorch /usr/bin/busted spec/torch/dispatch_schema_spec.lua
]]
local torch = require "torch"
local ffi = require "ffi"
local dispatch = require "torch._dispatch"
local schema = require "torch._schema"
local C = require("torch._C").C

local op_out = ffi.new("lt_op *[1]")
local TENSOR_TAG = 1   -- LT_V_TENSOR (bindings/lt.h)

local function find_op(name, overload)
  assert.are.equal(0, C.lt_op_find(op_out, "aten::" .. name, overload or ""))
  assert.is_not_nil(op_out[0])
  return op_out[0]
end

-- Deep equality of two parsed schemas, ignoring the source text; returns the first differing path.
local function difference(a, b, path)
  if type(a) ~= type(b) then return path end
  if type(a) ~= "table" then
    if a ~= b and not (a ~= a and b ~= b) then return path end
    return nil
  end
  for k, v in pairs(a) do
    if k ~= "func" then
      local d = difference(v, b[k], path .. "." .. tostring(k))
      if d then return d end
    end
  end
  for k in pairs(b) do
    if a[k] == nil then return path .. "." .. tostring(k) end
  end
end

describe("the op table against the loaded libtorch", function()
  it("parses every bound overload's registered schema exactly as its generated func line", function()
    local checked, differing = 0, {}
    for func in dispatch.each_entry() do
      local parsed = schema.parse(func)
      if C.lt_op_find(op_out, "aten::" .. parsed.name, parsed.overload) == 0 and op_out[0] ~= nil then
        local live, text = dispatch.live_schema(op_out[0])
        checked = checked + 1
        local d
        if live then d = difference(parsed, live, "") else d = "unparsable: " .. tostring(text) end
        if d and #differing < 5 then differing[#differing + 1] = func .. " -> " .. d end
      end
    end
    assert.is_true(checked > 2000, "only " .. checked .. " overloads were found in this libtorch")
    assert.are.same({}, differing)
  end)

  it("binds overloads with the registered schema's arguments", function()
    local list = dispatch.overloads("add")
    assert.is_true(#list >= 2)
    for _, entry in ipairs(list) do
      local live = dispatch.live_schema(entry.op)
      assert.are.equal(#live.args, entry.nargs)
      for i, p in ipairs(live.args) do assert.are.equal(p.name, entry.args[i].name) end
    end
  end)

  it("reads string defaults with escaped quotes as the schema means them", function()
    local e = schema.parse([[f(Tensor dummy, str a="\"'\\", str b='"\'\\', str c="x,y") -> Tensor]])
    assert.are.equal([["'\]], e.args[2].default)
    assert.are.equal([["'\]], e.args[3].default)
    assert.are.equal("x,y", e.args[4].default)
    assert.are.equal(4, #e.args)
  end)
end)

describe("lt_op_call", function()
  local V = ffi.new("lt_value[4]")
  local R = ffi.new("lt_value[2]")
  local n = ffi.new("int[1]")

  it("refuses a call with fewer arguments than the registered schema, naming the schema", function()
    local op = find_op("add", "Tensor")   -- (Tensor self, Tensor other, *, Scalar alpha=1)
    local x = torch.ones(2)
    V[0].tag, V[0].p = TENSOR_TAG, x.h
    V[1].tag, V[1].p = TENSOR_TAG, x.h
    assert.are_not.equal(0, C.lt_op_call(op, V, 2, R, 2, n))
    local message = require("torch._C").last_error()
    assert.matches("aten::add%.Tensor%(.*%) %-> Tensor: takes 3 arguments, called with 2", message)
    assert.are.equal(0, n[0])
  end)

  it("refuses a call with more arguments too", function()
    local op = find_op("neg")
    local x = torch.ones(2)
    for i = 0, 2 do V[i].tag, V[i].p = TENSOR_TAG, x.h end
    assert.are_not.equal(0, C.lt_op_call(op, V, 3, R, 2, n))
    assert.matches("takes 1 arguments, called with 3", require("torch._C").last_error())
  end)
end)
