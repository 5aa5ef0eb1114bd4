--[[
  torch.optim.muon — Muon (MomentUm Orthogonalized by Newton-Schulz, Jordan et al. 2024), as
  PyTorch 2.11's torch.optim.Muon (https://pytorch.org/docs/2.11/generated/torch.optim.Muon.html):
  SGD momentum whose update matrix is orthogonalised by a few Newton-Schulz iterations in
  bfloat16. For the 2-D weights of hidden layers only; biases, norms and embeddings go to AdamW.

      local opt = optim.Muon(hidden_weights, {lr = 0.02, adjust_lr_fn = "match_rms_adamw"})

  Options: lr = 1e-3, weight_decay = 0.1 (decoupled: θ ← θ (1 − γ λ)), momentum = 0.95,
  nesterov = true, ns_coefficients = {3.4445, -4.775, 2.0315}, eps = 1e-7, ns_steps = 5,
  adjust_lr_fn = None ("original": γ √max(1, A/B); "match_rms_adamw": 0.2 γ √max(A, B)).
  State per parameter: momentum_buffer.
]]
local torch = require "torch"
local base = require "torch.optim.optimizer"
local U = require "torch.optim._util"
local None = require "torch.serialization.none"
local P = require "torch._pysig"

local M = {}

--[[ zeropower_via_newtonschulz(G, {a, b, c}, steps, eps) -> X ≈ U S' Vᵀ (bfloat16), S'_ii ≈ 1:
       X ← bf16(G), transposed when G is tall;  X ← X / max(‖X‖_F, ε)
       repeat steps times:  A ← X Xᵀ;  B ← b A + c A A;  X ← a X + B X
       transposed back when G is tall ]]
function M.zeropower_via_newtonschulz(grad, coefficients, steps, eps)
  if steps >= 100 then error("Muon: number of steps must be less than 100 for computational efficiency", 0) end
  if grad:dim() ~= 2 then error("Muon: input tensor gradient must be a 2D matrix", 0) end
  local a, b, c = coefficients[1], coefficients[2], coefficients[3]
  local tall = grad:size(0) > grad:size(1)
  local x = grad:bfloat16()
  if tall then x = x:t() end
  x:div_(torch.linalg.vector_norm(x, 2):clamp({ min = eps }))
  for _ = 1, steps do
    local gram = torch.matmul(x, x:t())
    local update = torch.addmm(gram, gram, gram, { beta = b, alpha = c })
    x = torch.addmm(x, update, x, { beta = a })
  end
  if tall then x = x:t() end
  return x
end

local function adjust_lr(lr, fn, p)
  local A, B = p:size(0), p:size(1)
  if fn == None or fn == nil or fn == "original" then return U.lr_times(lr, math.sqrt(math.max(1, A / B))) end
  if fn == "match_rms_adamw" then return U.lr_times(lr, 0.2 * math.sqrt(math.max(A, B))) end
  return U.lr_times(lr, 1.0)
end

--[[ muon(params, grads, bufs, n, o): one step for n 2-D parameters; bufs[i] the momentum buffer.

       for each parameter θ (A×B) with gradient g (γ = lr, λ = weight_decay, μ = momentum):
         b ← b + (1 − μ) (g − b)                        (lerp_)
         u ← g + μ (b − g) if nesterov, else b          (lerp)
         O ← NewtonSchulz(u)
         θ ← θ (1 − γ λ);   θ ← θ − adjust_lr(γ, A, B) O
]]
function M.muon(params, grads, bufs, n, o)
  local lr, wd, mu = o.lr, o.weight_decay, o.momentum
  for i = 1, n do
    local p, g, buf = params[i], grads[i], bufs[i]
    if g:dim() ~= 2 then error("Muon: param gradient must be a 2D matrix", 0) end
    buf:lerp_(g, 1 - mu)
    local update = o.nesterov and g:lerp(buf, mu) or buf
    update = M.zeropower_via_newtonschulz(update, o.ns_coefficients, o.ns_steps, o.eps)
    local adjusted = adjust_lr(lr, o.adjust_lr_fn, p)
    -- 1 - lr * wd: with a tensor lr a tensor factor (float32 arithmetic), as PyTorch's
    p:mul_(torch.is_tensor(lr) and (1 - lr:reshape({}) * wd) or (1 - lr * wd))
    p:add_(update, { alpha = -adjusted })
  end
end

local function check(o)
  local nn = U.non_negative
  local msg = U.lr(o, "learning rate (should be >= 0)")
    or U.number(o, "momentum", "momentum (should be >= 0)", nn)
    or U.number(o, "weight_decay", "weight decay (should be >= 0)", nn)
    or U.number(o, "eps", "epsilon value", nn)
    or U.number(o, "ns_steps", "ns_steps (should be an integer below 100)",
      function(v) return v >= 0 and v < 100 and v % 1 == 0 end)
    or U.boolean(o, "nesterov")
  if msg then return msg end
  local c = o.ns_coefficients
  if type(c) ~= "table" or #c ~= 3 or type(c[1]) ~= "number" or type(c[2]) ~= "number" or type(c[3]) ~= "number" then
    return "invalid ns_coefficients: expected a table of exactly 3 numbers"
  end
  local fn = o.adjust_lr_fn
  if fn ~= None and fn ~= "original" and fn ~= "match_rms_adamw" then
    return ("adjust learning rate function %s is not supported"):format(tostring(fn))
  end
end

local Muon = base.Optimizer:extend("Muon", { lr = 1e-3, weight_decay = 0.1, momentum = 0.95, nesterov = true,
  ns_coefficients = { 3.4445, -4.775, 2.0315 }, eps = 1e-7, ns_steps = 5, adjust_lr_fn = None }, check,
  "params, lr=0.001, weight_decay=0.1, momentum=0.95, nesterov=True, ns_coefficients=None, eps=1e-07, "
  .. "ns_steps=5, adjust_lr_fn=None")
M.Muon = Muon

-- Only 2-D parameters, checked when the optimizer is made (as PyTorch).
function Muon.new(class, params, opts)
  local self = base.Optimizer.new(class, params, opts)
  for _, group in ipairs(self.param_groups) do
    for _, p in ipairs(group.params) do
      if p:dim() ~= 2 then
        P.fail("Muon only supports 2D parameters whereas we found a parameter with size: %s", tostring(p:size()))
      end
    end
  end
  return self
end

function Muon:init_state(p) return { momentum_buffer = torch.zeros_like(p) } end

function Muon:update_group(group)
  local params, grads, states, n = self:collect(group)
  local bufs = {}
  for i = 1, n do bufs[i] = states[i].momentum_buffer end
  M.muon(params, grads, bufs, n, group)
  U.free(grads, n)
end

return M
