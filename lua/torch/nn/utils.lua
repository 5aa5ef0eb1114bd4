--[[
  torch.nn.utils — gradient utilities for training loops (as torch.nn.utils in PyTorch):

    nn.utils.clip_grad_norm_(params, max_norm, {norm_type = 2, error_if_nonfinite = false})
        scales every gradient by min(1, max_norm / (total_norm + 1e-6)), where total_norm is the
        norm_type-norm of all gradients together (inf: the largest |g|); returns total_norm as a
        0-d tensor (before clipping), as PyTorch does. Parameters without .grad are skipped.
    nn.utils.clip_grad_value_(params, clip_value)   clamps every gradient to [-clip_value, clip_value]
    nn.utils.get_total_norm(tensors, norm_type=2, error_if_nonfinite=false) and
    nn.utils.clip_grads_with_norm_(params, max_norm, total_norm): clip_grad_norm_'s two halves
    (PyTorch 2.11); nn.utils.clip_grad_norm is PyTorch's deprecated name (warns once).
    nn.utils.grad_flow(model, {vanishing = 1e-7, exploding = 1e3})
        -> a report: an array of {name, shape, grad_norm, param_norm, ratio, status} per parameter,
        status "ok" | "no grad" | "zero" | "vanishing" | "exploding" | "nonfinite" | "frozen"
        (grad_norm = |g|_2, param_norm = |p|_2, ratio = grad_norm / param_norm); report.flagged lists
        the entries that need a look (all but "ok" and "frozen"). tostring(report), or
        nn.utils.format_grad_flow(report), prints a table with the flagged rows marked "<--".
        Call it after backward(), before the optimizer step / zero_grad.

  Gathered here from their own files (see each for details): parameters_to_vector,
  vector_to_parameters, skip_init (torch.nn.utils_params); fuse_conv_bn_eval/_weights,
  fuse_linear_bn_eval/_weights, convert_conv2d/3d_weight_memory_format (torch.nn.utils_fusion);
  weight_norm, remove_weight_norm, spectral_norm, remove_spectral_norm, the hook forms
  (torch.nn.utils_norm_hooks); nn.utils.parametrize (torch.nn.parametrize) and
  nn.utils.parametrizations (torch.nn.parametrizations); nn.utils.rnn (torch.nn.utils_rnn). Each
  of those files loads at the first read of one of its names (torch._lazy_namespace).

  Arguments bind as PyTorch's (positional, keyword or mixed: clip_grad_norm_{parameters = ps, max_norm = 1}).
  `params` is a Lua array of tensors (model:parameters()) or one tensor. The norms of many
  tensors are taken in one libtorch call (torch._foreach_norm), the CPU scaling too
  (torch._foreach_mul_); on other devices the scale stays a tensor, so nothing waits on the GPU.

  Gradient accumulation needs nothing special: backward() adds into .grad until zero_grad().
      for i, batch in ipairs(batches) do
        (criterion(model(batch.x), batch.y) / accum_steps):backward()
        if i % accum_steps == 0 then nn.utils.clip_grad_norm_(model:parameters(), 1.0); opt:step(); opt:zero_grad() end
      end
]]
local torch = require "torch"
local P = require "torch._pysig"
local lazy = require "torch._lazy_namespace"

local M = {}

local function shape(t) return "[" .. table.concat(t:size(), ", ") .. "]" end

-- The parameters of `params` that have a gradient, and those gradients (detached).
local function grads_of(fname, params)
  if torch.is_tensor(params) then params = { params } end
  if type(params) ~= "table" then
    error(("bad argument #1 to '%s' (array of tensors expected, got %s)"):format(fname, type(params)), 3)
  end
  local grads = {}
  for i, p in ipairs(params) do
    if not torch.is_tensor(p) then
      error(("bad argument #1 to '%s' (array of tensors expected, item %d is a %s)"):format(fname, i, type(p)), 3)
    end
    local g = p.grad
    if g ~= nil then grads[#grads + 1] = g:detach() end
  end
  return grads
end

-- Per-tensor norms as a list of 0-d tensors on `device`.
local function norms_of(list, ord, device)
  local norms = torch._foreach_norm(list, ord)
  for i, n in ipairs(norms) do
    if n.device ~= device then norms[i] = n:to(device) end
  end
  return norms
end

-- norm_type as a number (Python's float(norm_type): "inf" is math.huge).
local function norm_order(fname, norm_type)
  if norm_type == "inf" then return math.huge end
  if norm_type == "-inf" then return -math.huge end
  if type(norm_type) ~= "number" then
    P.fail("%s: norm_type must be a number (math.huge for inf), got %s", fname, type(norm_type))
  end
  return norm_type
end

-- Python's str(float(x)) for the message: 2 -> "2.0", math.huge -> "inf".
local function pyfloat(x)
  if x == math.huge then return "inf" elseif x == -math.huge then return "-inf" end
  return x % 1 == 0 and ("%.1f"):format(x) or tostring(x)
end

-- The norm of the norms of `tensors` (a detached list), on the first one's device, or an error.
local function total_norm_of(fname, tensors, norm_type, error_if_nonfinite)
  if #tensors == 0 then return torch.tensor(0.0) end
  local total = torch.no_grad(function()
    return torch.linalg.vector_norm(torch.stack(norms_of(tensors, norm_type, tensors[1].device)), norm_type)
  end)
  if error_if_nonfinite and not total:isfinite():item() then
    P.fail("%s: the total norm of order %s for gradients from `parameters` is non-finite, so it "
      .. "cannot be clipped. To disable this error and scale the gradients by the non-finite norm anyway, "
      .. "set error_if_nonfinite = false", fname, fname == "clip_grad_norm_" and tostring(norm_type) or pyfloat(norm_type))
  end
  return total
end

-- grads *= min(1, max_norm / (total_norm + 1e-6)), in place.
local function scale_grads(grads, max_norm, total_norm)
  if #grads == 0 then return end
  torch.no_grad(function()
    -- PyTorch's arithmetic, step for step: the same float32 rounding gives the same grads.
    local coef = (max_norm / (total_norm + 1e-6)):clamp_max(1.0)
    if grads[1].device.type == "cpu" and coef.device.type == "cpu" then
      torch._foreach_mul_(grads, coef:item())
    else
      for _, g in ipairs(grads) do g:mul_(coef:to(g.device)) end
    end
  end)
end

local function check_max_norm(fname, max_norm)
  if type(max_norm) ~= "number" then
    P.fail("bad argument #2 to '%s' (number expected, got %s)", fname, type(max_norm))
  end
end

local function clip_grad_norm_(params, max_norm, opts)
  check_max_norm("clip_grad_norm_", max_norm)
  opts = opts or {}
  local norm_type = norm_order("clip_grad_norm_", opts.norm_type or 2)
  local grads = grads_of("clip_grad_norm_", params)
  if #grads == 0 then return torch.tensor(0.0, { dtype = torch.float32 }) end
  local total = total_norm_of("clip_grad_norm_", grads, norm_type, opts.error_if_nonfinite)
  scale_grads(grads, max_norm, total)
  return total
end

local function clip_grad_value_(params, clip_value)
  if type(clip_value) ~= "number" then
    error(("bad argument #2 to 'clip_grad_value_' (number expected, got %s)"):format(type(clip_value)), 2)
  end
  local grads = grads_of("clip_grad_value_", params)
  torch.no_grad(function()
    for _, g in ipairs(grads) do g:clamp_(-clip_value, clip_value) end
  end)
end

-- PyTorch 2.11's signatures: positional, keyword or mixed arguments.
local CLIP_NORM = P.signature("clip_grad_norm_", "parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None")
local CLIP_VALUE = P.signature("clip_grad_value_", "parameters, clip_value, foreach=None")
function M.clip_grad_norm_(...) return clip_grad_norm_(P.lua_form(CLIP_NORM, P.bind_given(CLIP_NORM, ...), 2)) end
function M.clip_grad_value_(...) return clip_grad_value_(P.lua_form(CLIP_VALUE, P.bind_given(CLIP_VALUE, ...), 2)) end

function M._warn(msg) require("torch._warnings").warn(msg, nil, "FutureWarning") end
local clip_norm_warned = false
local CLIP_NORM_OLD = P.signature("clip_grad_norm", "parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None")
function M.clip_grad_norm(...)
  local a = P.bind_given(CLIP_NORM_OLD, ...)
  if not clip_norm_warned then
    clip_norm_warned = true
    M._warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of `torch.nn.utils.clip_grad_norm_`.")
  end
  return clip_grad_norm_(P.lua_form(CLIP_NORM_OLD, a, 2))
end

-- get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None): the norm of
-- the tensors' norms, as if they were one vector (a 0-d tensor; tensor(0.) for none).
local TOTAL_NORM = P.signature("get_total_norm", "tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None")
function M.get_total_norm(...)
  local a = P.bind(TOTAL_NORM, ...)
  local tensors = a.tensors
  if torch.is_tensor(tensors) then tensors = { tensors } end
  if type(tensors) ~= "table" then
    P.fail("bad argument #1 to 'get_total_norm' (array of tensors expected, got %s)", type(tensors))
  end
  local list = {}
  for i, t in ipairs(tensors) do
    if not torch.is_tensor(t) then
      P.fail("bad argument #1 to 'get_total_norm' (array of tensors expected, item %d is a %s)", i, type(t))
    end
    list[i] = t:detach()
  end
  return total_norm_of("get_total_norm", list, norm_order("get_total_norm", a.norm_type), a.error_if_nonfinite)
end

-- clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None): scales the gradients
-- by min(1, max_norm / (total_norm + 1e-6)), total_norm given (from get_total_norm).
local CLIP_WITH_NORM = P.signature("clip_grads_with_norm_", "parameters, max_norm, total_norm, foreach=None")
function M.clip_grads_with_norm_(...)
  local a = P.bind(CLIP_WITH_NORM, ...)
  check_max_norm("clip_grads_with_norm_", a.max_norm)
  if not torch.is_tensor(a.total_norm) then
    P.fail("bad argument #3 to 'clip_grads_with_norm_' (Tensor expected, got %s)", type(a.total_norm))
  end
  scale_grads(grads_of("clip_grads_with_norm_", a.parameters), a.max_norm, a.total_norm)
end

---------------------------------------------------------------- grad flow
local function classify(e, opts)
  if not e.requires_grad then return "frozen" end
  local g = e.grad_norm
  if g == nil then return "no grad" end
  if g ~= g or g == math.huge then return "nonfinite" end
  if g == 0 then return "zero" end
  if g < opts.vanishing then return "vanishing" end
  if g > opts.exploding then return "exploding" end
  return "ok"
end

local report_mt = {}

function M.grad_flow(model, opts)
  if type(model) ~= "table" or type(model.named_parameters) ~= "function" then
    error(("bad argument #1 to 'grad_flow' (Module expected, got %s)"):format(type(model)), 2)
  end
  opts = { vanishing = opts and opts.vanishing or 1e-7, exploding = opts and opts.exploding or 1e3 }
  local named = model:named_parameters()
  local report, params, grads, with_grad = setmetatable({ flagged = {} }, report_mt), {}, {}, {}
  for i, nv in ipairs(named) do
    local p = nv[2]
    report[i] = { name = nv[1], shape = shape(p), requires_grad = p.requires_grad }
    params[i] = p:detach()
    local g = p.grad
    if g ~= nil then
      grads[#grads + 1] = g:detach()
      with_grad[#with_grad + 1] = i
    end
  end
  if #named == 0 then return report end
  torch.no_grad(function()
    -- one call per list, then one host transfer each; float64 keeps large/small norms readable
    local pn = torch.stack(norms_of(params, 2, params[1].device)):double():tolist()
    for i, e in ipairs(report) do e.param_norm = pn[i] end
    if #grads > 0 then
      local gn = torch.stack(norms_of(grads, 2, grads[1].device)):double():tolist()
      for k, i in ipairs(with_grad) do report[i].grad_norm = gn[k] end
    end
  end)
  for _, e in ipairs(report) do
    if e.grad_norm ~= nil and e.param_norm > 0 then e.ratio = e.grad_norm / e.param_norm end
    e.status = classify(e, opts)
    if e.status ~= "ok" and e.status ~= "frozen" then report.flagged[#report.flagged + 1] = e end
  end
  return report
end

local function num(v) return v == nil and "-" or ("%.3e"):format(v) end

function M.format_grad_flow(report)
  if type(report) ~= "table" or type(report.flagged) ~= "table" then
    error("bad argument #1 to 'format_grad_flow' (a report from nn.utils.grad_flow expected)", 2)
  end
  local rows = { { "parameter", "shape", "grad_norm", "param_norm", "ratio", "status" } }
  for _, e in ipairs(report) do
    local flagged = e.status ~= "ok" and e.status ~= "frozen"
    rows[#rows + 1] = { e.name, e.shape, num(e.grad_norm), num(e.param_norm), num(e.ratio),
      flagged and (e.status:upper() .. "  <--") or e.status }
  end
  local width = {}
  for _, r in ipairs(rows) do
    for j, c in ipairs(r) do width[j] = math.max(width[j] or 0, #c) end
  end
  local lines = { ("grad flow: %d parameters, %d flagged"):format(#report, #report.flagged) }
  for _, r in ipairs(rows) do
    local cells = {}
    for j, c in ipairs(r) do cells[j] = j < #r and (c .. (" "):rep(width[j] - #c)) or c end
    lines[#lines + 1] = "  " .. table.concat(cells, "  ")
  end
  return table.concat(lines, "\n")
end

report_mt.__tostring = M.format_grad_flow

---------------------------------------------------------------- the rest of torch.nn.utils
-- Loaded at first use; the index names each file's public names (spec/torch/lazy_namespace_spec.lua).
return lazy.install(M, {
  name = "torch.nn.utils",
  parts = {
    { "torch.nn.utils_params", { "parameters_to_vector", "skip_init", "vector_to_parameters" } },
    { "torch.nn.utils_fusion", { "convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format",
      "fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval", "fuse_linear_bn_weights" } },
    { "torch.nn.utils_norm_hooks", { "remove_spectral_norm", "remove_weight_norm", "spectral_norm", "weight_norm" } },
  },
  fields = {
    rnn = "torch.nn.utils_rnn",   -- torch.nn.utils.rnn: PackedSequence, pack_padded_sequence, ...
    parametrize = "torch.nn.parametrize",
    parametrizations = "torch.nn.parametrizations",
  },
})
