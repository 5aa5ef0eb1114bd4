--[[
  torch.nn._transformer_util — helpers the Transformer layer files share (lua/torch/nn/transformer.lua,
  lua/torch/nn/transformer_decoder.lua); internal, not part of nn's public surface.

  - deepcopy(module): copy.deepcopy for a module tree (TransformerEncoder / Decoder clones).
  - activation_fn(label, activation): "relu" | "gelu" | a function | a Module -> the callable.
  - check_bias(label, bias): the layers' bias option (nil = true) as a boolean; else an error.
  - generate_square_subsequent_mask(sz, {dtype =, device =}): (sz, sz) float, 0 on and below
    the diagonal, -inf above (position i may attend to j <= i).
  - detect_is_causal_mask(mask, is_causal, size): PyTorch's _detect_is_causal_mask: an explicit
    is_causal is returned as is; nil means "is mask exactly the causal (size, size) mask?".
  - seq_len(src, batch_first): the sequence length of (S, E), (S, N, E) or (N, S, E).
  - check_seq(label, what, d_model, x, kpm): rank / feature size of src, tgt or memory and the
    dtype of its key padding mask, raised at the user's line.
  - canonical_masks(label, x, mask, kpm, mask_name, kpm_name): both masks as float
    (F._canonical_mask), the dtype of each checked first.

  Usage (internal):  local TU = require "torch.nn._transformer_util"
]]
local torch = require "torch"
local module = require "torch.nn.module"
local F = require "torch.nn.functional"
local U = require "torch.nn._layer_util"

local Parameter, is_module = module.Parameter, module.is_module

local M = {}

--[[ copy.deepcopy for a module tree: new parameter and buffer tensors with the same values
     (and requires_grad), new child modules, copies of plain tables; classes, functions and
     other objects with a metatable are shared. Hooks are kept (as Python's deepcopy does). ]]
local function deepcopy(v, memo)
  if memo[v] ~= nil then return memo[v] end
  if torch.is_tensor(v) then
    local c = torch.no_grad(function() return v:detach():clone() end)
    if module.is_parameter(v) then c = Parameter(c, v.requires_grad) end
    memo[v] = c
    return c
  end
  if type(v) ~= "table" or (getmetatable(v) ~= nil and not is_module(v)) then return v end
  local c = {}
  memo[v] = c
  for k, x in next, v do rawset(c, deepcopy(k, memo), deepcopy(x, memo)) end
  return setmetatable(c, getmetatable(v))
end
function M.deepcopy(m) return deepcopy(m, {}) end

function M.check_bias(label, bias)
  if bias == nil then return true end
  if type(bias) ~= "boolean" then
    U.fail(("%s: bias must be a boolean, got %s"):format(label, type(bias)))
  end
  return bias
end

function M.activation_fn(label, activation)
  if activation == nil or activation == "relu" then return function(x) return x:relu() end end
  if activation == "gelu" then return function(x) return x:gelu() end end
  if type(activation) == "function" or is_module(activation) then return activation end
  U.fail(("%s: activation should be relu/gelu, a function or a Module, not %s"):format(label, tostring(activation)))
end

function M.generate_square_subsequent_mask(sz, opts)
  if not U.is_int(sz) or sz < 0 then
    U.fail(("generate_square_subsequent_mask: sz must be a non-negative integer, got %s"):format(tostring(sz)))
  end
  opts = opts or {}
  return torch.full({ sz, sz }, -math.huge, { dtype = opts.dtype, device = opts.device }):triu(1)
end

function M.detect_is_causal_mask(mask, is_causal, size)
  if is_causal ~= nil or mask == nil then return is_causal == true end
  local sz = size or mask:size(-2)
  if mask:dim() ~= 2 or mask:size(0) ~= sz or mask:size(1) ~= sz then return false end
  local causal = M.generate_square_subsequent_mask(sz, { dtype = mask.dtype, device = mask.device })
  return mask:eq(causal):all():item()
end

function M.seq_len(src, batch_first)
  if src:dim() == 2 then return src:size(0) end
  return src:size(batch_first and 1 or 0)
end

local function check_mask_dtype(label, name, m)
  if m ~= nil and (not torch.is_tensor(m) or (m.dtype ~= torch.bool and not m:is_floating_point())) then
    U.fail(("%s: only bool and floating types of %s are supported, got %s"):format(label, name,
      torch.is_tensor(m) and tostring(m.dtype) or type(m)))
  end
end

function M.check_seq(label, what, d_model, x, kpm, kpm_name)
  if not torch.is_tensor(x) then U.fail(("%s: expected a Tensor %s, got %s"):format(label, what, type(x))) end
  if (x:dim() ~= 2 and x:dim() ~= 3) or x:size(-1) ~= d_model then
    U.fail(("%s: expected %s of shape (S, N, %d), (N, S, %d) or (S, %d), got %s"):format(label, what, d_model, d_model,
      d_model, U.shape(x)))
  end
  check_mask_dtype(label, kpm_name, kpm)
end

function M.canonical_masks(label, x, mask, kpm, mask_name, kpm_name)
  check_mask_dtype(label, mask_name, mask)
  check_mask_dtype(label, kpm_name, kpm)
  kpm = F._canonical_mask(kpm, kpm_name, mask and mask.dtype, mask_name, x.dtype, label)
  return F._canonical_mask(mask, mask_name, nil, "", x.dtype, label), kpm
end

return M
