--[[
  torch.tools.memory — `tool.lua estimate-memory`: training memory per GPU, pure arithmetic.

  Model states, bytes per parameter by --precision and --optimizer:
      precision   weights  grads  fp32 master   adam(w) moments   sgd momentum
      fp32           4       4        -               8                4
      bf16-mixed     2       2        4               8                4      (also fp16-mixed)
      bf16 (pure)    2       2        -               4                2
  so mixed-precision AdamW costs 16 bytes/parameter (3B parameters: 48 GB) before activations.
  Sharding: --tp and --pp divide all model states; --zero 1 shards optimizer states (and the
  master copy) over the --dp data-parallel ranks, 2 also the grads, 3 also the weights.
  Activations (optional: --batch, --seq, --hidden, --layers [--heads]) per GPU, after Korthikanti
  et al. for a transformer layer in 16-bit: seq * batch * hidden * (34 + 5 * heads * seq / hidden)
  bytes per layer (x2 for fp32), divided by --tp; --recompute keeps only each layer's input
  (2 * seq * batch * hidden bytes per layer). Or give --activations-gb directly.
  --setup FILE counts the parameters of a doctor setup's model instead of --params.
  Prints each term, the total, the binding term and what to change; --gpu-mem GB gives exit 1
  when the total does not fit. Figures are estimates: confirm on the real job.
]]
local T = require "torch.tools"

local M = { name = "estimate-memory", summary = "weights/grads/optimizer/activations memory by precision",
  usage = [[usage: ltorch tools/tool.lua estimate-memory (--params N | --setup FILE) [options]
  --params N            parameter count (7B, 350M, 1.2e9)
  --setup FILE          or: count the parameters of a doctor setup's model (setup.model())
  --precision P         fp32 | bf16-mixed | fp16-mixed | bf16   (default bf16-mixed)
  --optimizer O         adamw | adam | sgd-momentum | sgd | none   (default adamw)
  --dp N --zero 0..3    data-parallel ranks and ZeRO stage (default 1, 0)
  --tp N --pp N         tensor / pipeline parallel degrees (default 1)
  --batch B --seq S --hidden H --layers L [--heads A] [--recompute]   activation estimate
  --activations-gb X    activation memory per GPU, given directly
  --gpu-mem GB          GPU memory: exit 1 if the estimate does not fit
  --json                one JSON object
exit 0 fits (or no --gpu-mem), 1 does not fit, 2 usage error]] }

local STATES = {
  fp32 = { weights = 4, grads = 4, master = 0, adam = 8, momentum = 4 },
  ["bf16-mixed"] = { weights = 2, grads = 2, master = 4, adam = 8, momentum = 4 },
  ["fp16-mixed"] = { weights = 2, grads = 2, master = 4, adam = 8, momentum = 4 },
  bf16 = { weights = 2, grads = 2, master = 0, adam = 4, momentum = 2 },
}

--[[ estimate(o) -> {weights=, grads=, optimizer=, activations=, total=, binding=} in bytes per GPU.
     o: params, precision, optimizer, dp, zero, tp, pp, batch, seq, hidden, layers, heads,
     recompute, activations_gb. ]]
function M.estimate(o)
  local st = STATES[o.precision or "bf16-mixed"]
  if not st then T.usage_error("unknown --precision '%s' (fp32, bf16-mixed, fp16-mixed, bf16)", tostring(o.precision)) end
  local N = o.params
  if type(N) ~= "number" or N <= 0 then T.usage_error("--params must be a positive number") end
  local opt = o.optimizer or "adamw"
  local per_opt
  if opt == "adamw" or opt == "adam" then per_opt = st.adam
  elseif opt == "sgd-momentum" then per_opt = st.momentum
  elseif opt == "sgd" or opt == "none" then per_opt = 0
  else T.usage_error("unknown --optimizer '%s' (adamw, adam, sgd-momentum, sgd, none)", opt) end
  local dp, zero, tp, pp = o.dp or 1, o.zero or 0, o.tp or 1, o.pp or 1
  for k, v in pairs({ dp = dp, tp = tp, pp = pp }) do
    if v < 1 or v % 1 ~= 0 then T.usage_error("--%s must be a positive integer, got %s", k, tostring(v)) end
  end
  if zero ~= 0 and zero ~= 1 and zero ~= 2 and zero ~= 3 then T.usage_error("--zero must be 0, 1, 2 or 3") end
  local shard = N / (tp * pp)
  local r = {}
  r.weights = shard * st.weights / (zero >= 3 and dp or 1)
  r.grads = shard * st.grads / (zero >= 2 and dp or 1)
  local opt_bytes = per_opt + st.master   -- the fp32 master copy lives with the optimizer (ZeRO-1 shards it)
  r.optimizer = shard * opt_bytes / (zero >= 1 and dp or 1)
  if o.activations_gb then
    r.activations = o.activations_gb * 1e9
  elseif o.batch or o.seq or o.hidden or o.layers then
    local b, s, h, L = o.batch, o.seq, o.hidden, o.layers
    if not (b and s and h and L) then T.usage_error("the activation estimate needs --batch, --seq, --hidden and --layers") end
    local scale = (o.precision == "fp32") and 2 or 1
    local per_layer
    if o.recompute then
      per_layer = 2 * s * b * h * scale
    else
      local heads = o.heads or math.max(1, math.floor(h / 64))
      per_layer = s * b * h * (34 + 5 * heads * s / h) * scale
    end
    r.activations = per_layer * L / pp / tp
  else
    r.activations = 0
  end
  r.total = r.weights + r.grads + r.optimizer + r.activations
  local best, bk = -1, nil
  for _, k in ipairs({ "weights", "grads", "optimizer", "activations" }) do
    if r[k] > best then best, bk = r[k], k end
  end
  r.binding = bk
  r.bytes_per_param = (st.weights + st.grads + opt_bytes)
  return r
end

local advice = {
  weights = "shard the weights (ZeRO-3/FSDP, --zero 3) or split the model (--tp/--pp)",
  grads = "shard the gradients (ZeRO-2, --zero 2)",
  optimizer = "shard the optimizer states (ZeRO-1, --zero 1 with more --dp ranks) or use a lighter optimizer",
  activations = "activations bind: recompute (activation checkpointing, --recompute) or a smaller micro-batch; "
    .. "sharding weights does not help",
}

local function gb(x) return ("%.2f GB"):format(x / 1e9) end

function M.main(argv, out)
  local o = T.parse(argv, { params = "number", setup = "string", precision = "string", optimizer = "string", dp = "number",
    zero = "number", tp = "number", pp = "number", batch = "number", seq = "number", hidden = "number",
    layers = "number", heads = "number", recompute = "boolean", activations_gb = "number",
    gpu_mem = "number", json = "boolean" })
  if o.help then out(M.usage); return 0 end
  if o.setup and not o.params then
    local S = require "torch.doctor.setup"
    local ok, n = pcall(function()
      local setup = S.load(o.setup)
      if type(setup.model) ~= "function" then error("setup.model must be a function returning a Module", 0) end
      local count = 0
      for _, p in ipairs(setup.model():parameters()) do count = count + p:numel() end
      return count
    end)
    if not ok then T.usage_error("%s", tostring(n)) end
    o.params = n
  end
  if not o.params then T.usage_error("--params (or --setup) is required") end
  local r = M.estimate(o)
  local fits = not o.gpu_mem or r.total <= o.gpu_mem * 1e9
  if o.json then
    r.fits = fits
    out(require("torch.serialization.json").encode(r))
    return fits and 0 or 1
  end
  out(("%s parameters, %s, %s: %d bytes/parameter for model states (before sharding)"):format(
    ("%.4g"):format(o.params), o.precision or "bf16-mixed", o.optimizer or "adamw", r.bytes_per_param))
  for _, k in ipairs({ "weights", "grads", "optimizer", "activations" }) do
    out(("  %-12s %12s%s"):format(k, gb(r[k]), k == r.binding and "   <- binding" or ""))
  end
  out(("  %-12s %12s per GPU%s"):format("total", gb(r.total), o.gpu_mem and (" (GPU: %.1f GB)"):format(o.gpu_mem) or ""))
  if o.gpu_mem then
    out(fits and "fits." or ("does not fit: " .. advice[r.binding] .. "."))
  else
    out("largest term: " .. r.binding .. " (" .. advice[r.binding] .. ")")
  end
  out("estimate only: confirm on the real job (fragmentation, buffers, CUDA context add more).")
  return fits and 0 or 1
end

return M
