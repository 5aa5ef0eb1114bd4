--[[
  torch.gradcheck — torch.autograd.gradcheck and torch.autograd.gradgradcheck: the autograd
  Jacobian of a function checked against central finite differences, in float64 on the CPU
  (https://pytorch.org/docs/stable/generated/torch.autograd.gradcheck.html).

      gradcheck(fn, inputs, {eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=true})
      gradgradcheck(fn, inputs, grad_outputs=nil, {same options})

  Inputs that require grad are checked; each must be a float64 CPU tensor. For every element j of
  such an input x and every element e of every output o:
      numerical[j][e]  = (o(x + eps * 1_j) - o(x - eps * 1_j))[e] / (2 * eps)
      analytical[j][e] = (d o[e] / d x)[j]        (autograd.grad of the one-hot output e)
  and |analytical - numerical| <= atol + rtol * |numerical| must hold. fn runs as the user wrote it
  (grad mode on, perturbed inputs that still require grad), so a function that differentiates
  inside itself can be checked: that is how gradgradcheck works, as in PyTorch. It checks the
  function (inputs..., grad_outputs...) -> autograd.grad(fn(inputs), inputs, grad_outputs,
  create_graph=true), whose Jacobian is fn's second derivative; grad_outputs default to uniform
  random values in [-1, 1) that require grad.

  Like PyTorch, a failure raises ("gradcheck: Jacobian mismatch ...") unless raise_exception is
  false, which returns false and the message instead. Success returns true.
]]
local ffi = require "ffi"
local _C = require "torch._C"
local dtype_mod = require "torch.dtype"
local creation = require "torch._creation"
local autograd = require "torch.autograd"

local Ref = _C.Ref
local istype = ffi.istype
local float64 = dtype_mod.by_name.float64

local M = {}

local function flat_ptr(t)
  return ffi.cast("double*", t:data_ptr())
end

-- The tensor results of fn(xs[1..n]), in order.
local function outputs_of(fn, xs, n)
  local r = { fn(unpack(xs, 1, n)) }
  local o = {}
  for k = 1, table.maxn(r) do
    if istype(Ref, r[k]) then o[#o + 1] = r[k] end
  end
  return o
end

-- fn's outputs at xs, detached float64 copies.
local function values_of(fn, xs, n)
  local c = {}
  for k, t in ipairs(outputs_of(fn, xs, n)) do c[k] = t:detach():to(float64):contiguous():clone() end
  return c
end

-- numerical[j][k]: the central difference of output k (flat) for element j of input i.
local function numerical_jacobian(fn, inputs, n_in, i, eps)
  local x = inputs[i]
  local base = x:detach():contiguous():clone():requires_grad_(true)
  local xs = {}
  for k = 1, n_in do xs[k] = inputs[k] end
  xs[i] = base
  local p = flat_ptr(base)
  local numerical = {}
  for j = 0, base:numel() - 1 do
    local orig = p[j]
    p[j] = orig + eps
    local plus = values_of(fn, xs, n_in)
    p[j] = orig - eps
    local minus = values_of(fn, xs, n_in)
    p[j] = orig
    numerical[j] = {}
    for k = 1, #plus do numerical[j][k] = ((plus[k] - minus[k]) / (2 * eps)):contiguous() end
  end
  return numerical
end

-- The first mismatch between the numerical and analytical Jacobians of input i, or nil.
local function compare(outs, x, i, numerical, atol, rtol)
  local n = x:numel()
  for k, o in ipairs(outs) do
    if o.requires_grad then
      local m = o:numel()
      for e = 0, m - 1 do
        local onehot = creation.zeros(m, { dtype = float64 })
        flat_ptr(onehot)[e] = 1
        local g = autograd.grad({ o }, { x }, { grad_outputs = { onehot:view(o.shape):to(o.dtype) },
          retain_graph = true, allow_unused = true })[1]
        local gt = g and g:to(float64):contiguous() or nil
        local gp = gt and flat_ptr(gt) or nil
        for j = 0, n - 1 do
          local a = gp and gp[j] or 0
          local num = flat_ptr(numerical[j][k])[e]
          if math.abs(a - num) > atol + rtol * math.abs(num) then
            return ("Jacobian mismatch for output %d with respect to input %d,\n" ..
              "numerical:%.8g\nanalytical:%.8g\n(output element %d, input element %d)"):format(
              k - 1, i - 1, num, a, e, j)
          end
        end
      end
    else
      for j = 0, n - 1 do
        local d = numerical[j][k]:abs():max():item()
        if d > atol then return ("output %d does not require grad but its numerical gradient is %g"):format(k - 1, d) end
      end
    end
  end
end

-- The first problem found with fn at inputs, or nil.
local function first_mismatch(fn, inputs, eps, atol, rtol)
  local n_in = table.maxn(inputs)
  local diff_idx = {}
  for i = 1, n_in do
    local x = inputs[i]
    if istype(Ref, x) and x.requires_grad then
      if x.dtype ~= float64 or x.is_cuda then
        return "input " .. i .. " must be a float64 CPU tensor (got " .. tostring(x.dtype) .. ")"
      end
      diff_idx[#diff_idx + 1] = i
    end
  end
  if #diff_idx == 0 then return "no input requires grad" end
  local outs = outputs_of(fn, inputs, n_in)
  for _, i in ipairs(diff_idx) do
    local msg = compare(outs, inputs[i], i, numerical_jacobian(fn, inputs, n_in, i, eps), atol, rtol)
    if msg then return msg end
  end
end

local function check(fn, inputs, opts, level)
  opts = opts or {}
  if istype(Ref, inputs) then inputs = { inputs } end
  local msg = first_mismatch(fn, inputs, opts.eps or 1e-6, opts.atol or 1e-5, opts.rtol or 1e-3)
  if msg == nil then return true end
  if opts.raise_exception ~= false then error("gradcheck: " .. msg, level + 1) end
  return false, "gradcheck: " .. msg
end

function M.gradcheck(fn, inputs, opts)
  local ok, msg = check(fn, inputs, opts, 2)
  return ok, msg
end

function M.gradgradcheck(fn, inputs, grad_outputs, opts)
  if istype(Ref, inputs) then inputs = { inputs } end
  if istype(Ref, grad_outputs) then grad_outputs = { grad_outputs } end
  local n_in = table.maxn(inputs)
  local diff_idx = {}
  for i = 1, n_in do
    if istype(Ref, inputs[i]) and inputs[i].requires_grad then
      diff_idx[#diff_idx + 1] = i
    end
  end
  if grad_outputs == nil then
    grad_outputs = {}
    for _, o in ipairs(outputs_of(fn, inputs, n_in)) do
      if o.requires_grad then
        grad_outputs[#grad_outputs + 1] = (creation.rand(o.shape, { dtype = float64 }) * 2 - 1):requires_grad_(true)
      end
    end
  end
  local n_out = #grad_outputs
  local function first_grads(...)
    local all = { ... }
    local outs = {}
    for _, o in ipairs(outputs_of(fn, all, n_in)) do
      if o.requires_grad then outs[#outs + 1] = o end
    end
    local xs, gs = {}, {}
    for k, i in ipairs(diff_idx) do xs[k] = all[i] end
    for k = 1, n_out do gs[k] = all[n_in + k] end
    local grads = autograd.grad(outs, xs, { grad_outputs = gs, create_graph = true, allow_unused = true })
    local r = {}
    for k = 1, #xs do if grads[k] ~= nil then r[#r + 1] = grads[k] end end
    return unpack(r)
  end
  local all = {}
  for i = 1, n_in do all[i] = inputs[i] end
  for k = 1, n_out do all[n_in + k] = grad_outputs[k] end
  local ok, msg = check(first_grads, all, opts, 2)
  return ok, msg
end

return M
