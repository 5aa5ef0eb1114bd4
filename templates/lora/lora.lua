--[[
  lora.lua — LoRA adapters (Hu et al. 2021, https://arxiv.org/abs/2106.09685) for nn.Linear.
      LoRALinear(base, rank, alpha)   y = base(x) + (alpha / rank) * x A^T B^T
          base Linear (in -> out) frozen; lora_A (rank, in) ~ N(0, 1/rank), lora_B (out, rank)
          zero (on base's device and dtype), so a fresh adapter leaves the model's output
          exactly as it was.
          :merge()   folds the update into base.weight (W += alpha/rank * B A): inference costs
                     nothing extra;  :unmerge() takes it out again (for more training).
      apply(model, {rank =, alpha =, targets = {"linear1", ...}}) -> trainable parameters
          freezes the whole model, then wraps every nn.Linear whose name's last component is in
          targets (e.g. encoder.layers.0.linear1); errors when none matched.
      adapters(model) -> an object with state_dict() / load_state_dict(sd) over the lora_A /
          lora_B tensors only: save it alone (KBs), load it onto the same pretrained model.
      merge(model), unmerge(model)   every LoRALinear in model.
]]
local torch = require "torch"
local nn = torch.nn

local M = {}

local LoRALinear = nn.Module:extend("LoRALinear")
M.LoRALinear = LoRALinear

function LoRALinear:__init(base, rank, alpha)
  self.base = base
  base:requires_grad_(false)
  self.rank, self.alpha, self.scaling, self.merged = rank, alpha, alpha / rank, false
  local on = { device = base.weight.device, dtype = base.weight.dtype }
  self.lora_A = nn.Parameter(torch.randn(rank, base.in_features, on) / math.sqrt(rank))
  self.lora_B = nn.Parameter(torch.zeros(base.out_features, rank, on))
end

-- x (*, in) -> (*, out)
function LoRALinear:forward(x)
  local y = self.base(x)
  if self.merged then return y end
  return y + x:matmul(self.lora_A:t()):matmul(self.lora_B:t()) * self.scaling
end

function LoRALinear:delta() return self.lora_B:matmul(self.lora_A) * self.scaling end   -- (out, in)

function LoRALinear:merge()
  if not self.merged then
    torch.no_grad(function() self.base.weight:add_(self:delta()) end)
    self.merged = true
  end
  return self
end

function LoRALinear:unmerge()
  if self.merged then
    torch.no_grad(function() self.base.weight:sub_(self:delta()) end)
    self.merged = false
  end
  return self
end

function LoRALinear:extra_repr()
  return ("in_features=%d, out_features=%d, rank=%d, alpha=%g, merged=%s")
    :format(self.base.in_features, self.base.out_features, self.rank, self.alpha, tostring(self.merged))
end

local function each_lora(model, fn)
  for _, nm in ipairs(model:named_modules()) do
    if nm[2]._class == LoRALinear then fn(nm[1], nm[2]) end
  end
end

function M.apply(model, opts)
  local wanted = {}
  for _, t in ipairs(opts.targets) do wanted[t] = true end
  model:requires_grad_(false)
  local n = 0
  for _, nm in ipairs(model:named_modules()) do
    local parent = nm[2]
    for _, child in ipairs(parent:named_children()) do
      if wanted[child[1]] and child[2]._class == nn.Linear then
        parent[child[1]] = LoRALinear(child[2], opts.rank, opts.alpha)
        n = n + 1
      end
    end
  end
  if n == 0 then error("lora.apply: no nn.Linear named " .. table.concat(opts.targets, " / ") .. " in the model", 2) end
  local params = {}
  for _, p in ipairs(model:parameters()) do if p.requires_grad then params[#params + 1] = p end end
  return params
end

function M.adapters(model)
  return {
    state_dict = function()
      local sd = {}
      each_lora(model, function(name, m)
        sd[name .. ".lora_A"], sd[name .. ".lora_B"] = m.lora_A:detach(), m.lora_B:detach()
      end)
      return sd
    end,
    load_state_dict = function(_, sd)
      each_lora(model, function(name, m)
        local a, b = sd[name .. ".lora_A"], sd[name .. ".lora_B"]
        if not a or not b then error("lora: no adapter for " .. name .. " in the loaded state", 2) end
        m:unmerge()
        torch.no_grad(function() m.lora_A:copy_(a); m.lora_B:copy_(b) end)
      end)
    end,
  }
end

function M.merge(model) each_lora(model, function(_, m) m:merge() end) end
function M.unmerge(model) each_lora(model, function(_, m) m:unmerge() end) end

return M
