--[[
  torch.jit — TorchScript modules exported from PyTorch (`torch.jit.save(torch.jit.script(m), p)`
  or `torch.jit.trace`), loaded through libtorch's torch::jit::load and run from Lua.

      local m = torch.jit.load("model.pt")
      m:eval()
      local y = m(x)                       -- forward; a tuple/list result comes back as a Lua array
      for _, nv in ipairs(m:named_parameters()) do print(nv[1], nv[2]:size()) end

  Inputs are tensors; outputs a tensor, or a Lua array of tensors for a tuple or list.
  A TorchScript archive carries code, so load only files you trust (torch.load never runs code;
  this does, by design — it is PyTorch's TorchScript interpreter).
]]
local ffi = require "ffi"
local torch = require "torch"
local _C = require "torch._C"
local memory = require "torch._memory"

local C, check = _C.C, _C.check

local M = {}

local ScriptModule = {}
ScriptModule.__index = ScriptModule

local module_out = ffi.new("lt_jit_module*[1]")
local MAX_OUT = 64
local outputs = ffi.new("lt_tensor*[?]", MAX_OUT)
local nout, is_tuple, int_out = ffi.new("int[1]"), ffi.new("int[1]"), ffi.new("int[1]")
local name_out, tensor_out = ffi.new("const char*[1]"), _C.TensorOut()

function M.load(path)
  if type(path) ~= "string" then error("bad argument #1 to 'load' (string expected, got " .. type(path) .. ")", 2) end
  check(C.lt_jit_load(module_out, path), "jit.load")
  return setmetatable({ handle = ffi.gc(module_out[0], C.lt_jit_free), path = path }, ScriptModule)
end

-- m:call("method", x1, x2, ...) runs any exported method.
function ScriptModule:call(method, ...)
  local n = select("#", ...)
  local inputs = _C.TensorArray(math.max(n, 1))
  for i = 1, n do
    local x = select(i, ...)
    if not torch.is_tensor(x) then
      error(("bad argument #%d to '%s' (Tensor expected, got %s)"):format(i, method, type(x)), 2)
    end
    inputs[i - 1] = x.h
  end
  check(C.lt_jit_call(self.handle, method, inputs, n, outputs, MAX_OUT, nout, is_tuple), "jit " .. method, 2)
  local res = {}
  for i = 1, nout[0] do res[i] = memory.wrap(outputs[i - 1]) end
  if is_tuple[0] == 0 then return res[1] end
  return res
end

function ScriptModule:forward(...) return self:call("forward", ...) end
ScriptModule.__call = function(self, ...) return self:call("forward", ...) end

function ScriptModule:train(mode)
  check(C.lt_jit_train(self.handle, mode == false and 0 or 1), "train")
  return self
end

function ScriptModule:eval() return self:train(false) end

function ScriptModule:is_training()
  check(C.lt_jit_is_training(self.handle, int_out), "is_training")
  return int_out[0] ~= 0
end

local function named(self, which)
  check(C.lt_jit_named_tensors(self.handle, which, int_out), "named_parameters", 3)
  local out = {}
  for i = 0, int_out[0] - 1 do
    check(C.lt_jit_named_tensor(self.handle, i, name_out, tensor_out), "named_parameters", 3)
    out[#out + 1] = { ffi.string(name_out[0]), memory.wrap(tensor_out[0]) }
  end
  return out
end

-- Arrays of {name, tensor}, as torch.nn.Module:named_parameters() returns.
function ScriptModule:named_parameters() return named(self, 0) end
function ScriptModule:named_buffers() return named(self, 1) end

function ScriptModule:state_dict()
  local sd = {}
  for _, nv in ipairs(named(self, 0)) do sd[nv[1]] = nv[2]:detach() end
  for _, nv in ipairs(named(self, 1)) do sd[nv[1]] = nv[2]:detach() end
  return sd
end

ScriptModule.__tostring = function(self) return "ScriptModule(" .. self.path .. ")" end

M.ScriptModule = ScriptModule
return M
