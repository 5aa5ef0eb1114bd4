--[[
  torch.nn.utils_params — nn.utils' functions on a model's parameters as a whole
  (torch/nn/utils/convert_parameters.py, init.py), gathered into torch.nn.utils:

    parameters_to_vector(parameters) -> one 1-D tensor, the parameters flattened and concatenated
        in order (the gradient flows back to each parameter)
    vector_to_parameters(vec, parameters)  each parameter's .data becomes its slice of vec, viewed
        in the parameter's shape (sharing vec's storage, as PyTorch)
    skip_init(module_cls, ...) -> module_cls(...) whose parameters and buffers are left to the
        caller to initialise; the class must take a `device` argument

  PyTorch builds skip_init's module on the meta device and allocates it with to_empty, so the
  constructor draws no random numbers. ltorch has no meta device: it builds the module on the CPU
  with the default generator's state saved and restored around the constructor (so the random
  stream after skip_init is PyTorch's), then moves it to `device`. The values are whatever the
  constructor left, which a caller of skip_init must not rely on (PyTorch's are uninitialised).

  Usage:  local v = nn.utils.parameters_to_vector(model:parameters())
          nn.utils.vector_to_parameters(v * 0.5, model:parameters())
          local lin = nn.utils.skip_init(nn.Linear, 5, 1)
]]
local torch = require "torch"
local P = require "torch._pysig"
local guard = require "torch._guard"
local module = require "torch.nn.module"

local M = {}

local function typename(v) return torch.is_tensor(v) and "Tensor" or type(v) end

-- The parameters as an array of tensors, or a clear error.
local function tensor_list(fname, pos, params)
  if type(params) ~= "table" or module.is_module(params) then
    P.fail("bad argument #%d to '%s' (array of tensors expected, got %s)", pos, fname,
      module.is_module(params) and "a Module (pass model:parameters())" or typename(params))
  end
  for i, p in ipairs(params) do
    if not torch.is_tensor(p) then
      P.fail("bad argument #%d to '%s' (array of tensors expected, item %d is a %s)", pos, fname, i, typename(p))
    end
  end
  return params
end

-- PyTorch's _check_param_device: every parameter on the first one's device.
local function check_devices(params)
  local first = params[1] and tostring(params[1].device)
  for _, p in ipairs(params) do
    if tostring(p.device) ~= first then
      P.fail("Found two parameters on different devices, this is currently not supported.")
    end
  end
end

local TO_VECTOR = P.signature("parameters_to_vector", "parameters")
function M.parameters_to_vector(...)
  local params = tensor_list("parameters_to_vector", 1, P.bind(TO_VECTOR, ...).parameters)
  check_devices(params)
  if #params == 0 then P.fail("parameters_to_vector: expected a non-empty array of tensors") end
  local flat = {}
  for i, p in ipairs(params) do flat[i] = p:view(-1) end
  return torch.cat(flat)
end

local TO_PARAMS = P.signature("vector_to_parameters", "vec, parameters")
function M.vector_to_parameters(...)
  local a = P.bind(TO_PARAMS, ...)
  if not torch.is_tensor(a.vec) then
    P.fail("vector_to_parameters: expected torch.Tensor, but got: %s", typename(a.vec))
  end
  local params = tensor_list("vector_to_parameters", 2, a.parameters)
  check_devices(params)
  local need = 0
  for _, p in ipairs(params) do need = need + p:numel() end
  if a.vec:dim() ~= 1 or a.vec:size(0) < need then
    P.fail("vector_to_parameters: vec must be a 1-D tensor of at least %d elements (the parameters' total), got shape [%s]",
      need, table.concat(a.vec:size(), ", "))
  end
  local pointer = 0
  for _, p in ipairs(params) do
    local n = p:numel()
    p.data = a.vec:narrow(0, pointer, n):view_as(p):detach()
    pointer = pointer + n
  end
end

-- class is nn.Module or derives from it.
local function is_module_class(class)
  while type(class) == "table" do
    if class == module.Module then return true end
    class = rawget(class, "__base")
  end
  return false
end

function M.skip_init(module_cls, ...)
  if not is_module_class(module_cls) then
    P.fail("skip_init: Expected a Module; got %s", tostring(module_cls))
  end
  local sig = rawget(module_cls, "__signature")
  if sig == nil or sig.index.device == nil then
    P.fail("skip_init: Module must support a 'device' arg to skip initialization")
  end
  local n, args = select("#", ...), { ... }
  local kw = {}
  if n > 0 and P.is_keywords(args[n]) then
    for k, v in pairs(args[n]) do kw[k] = v end
    n = n - 1
  end
  local device = kw.device or "cpu"
  kw.device = "cpu"
  args[n + 1] = kw
  local m = guard.rng(torch.get_rng_state(), nil, module_cls, unpack(args, 1, n + 1))   -- restored whatever raised
  if tostring(torch.device(device)) ~= "cpu" then m:to(device) end
  return m
end

return M
