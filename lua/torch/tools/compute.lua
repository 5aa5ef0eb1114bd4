--[[
  torch.tools.compute — `tool.lua estimate-compute`: training compute for a dense model.
  FLOPs ≈ 6 · N · D (N parameters, D training tokens: 2 for the forward, 4 for the backward).
  GPU-hours = FLOPs / (peak FLOP/s per GPU · MFU · 3600); wall-clock = GPU-hours / GPUs;
  cost = GPU-hours · price. With --tokens-per-sec (measured, all GPUs together) the MFU is
  computed instead of assumed: MFU = 6 · N · tokens/s / (GPUs · peak). The tokens-per-parameter
  ratio is set against the compute-optimal ~20 (Chinchilla): below, the model is large for its
  data; well above, it is over-trained (cheaper to serve, more compute per quality).
]]
local T = require "torch.tools"

local M = { name = "estimate-compute", summary = "training FLOPs (6·N·tokens), GPU-hours, cost, MFU",
  usage = [[usage: ltorch tools/tool.lua estimate-compute --params N (--tokens D | --tokens-per-param R) [options]
  --params N            parameter count (7B, 125M)
  --tokens D            training tokens (300B), or --tokens-per-param R
  --gpus G              GPUs (default 1)
  --peak-tflops X       peak dense TFLOP/s per GPU at the training precision (default 989: H100 bf16)
  --mfu F               assumed model FLOPs utilisation, 0..1 (default 0.4)
  --tokens-per-sec X    measured throughput (all GPUs): gives the MFU instead of assuming it
  --price X             cost per GPU-hour (optional)
  --json                one JSON object
exit 0, 2 usage error]] }

function M.estimate(o)
  local N = o.params
  if type(N) ~= "number" or N <= 0 then T.usage_error("--params must be a positive number") end
  local D = o.tokens or (o.tokens_per_param and o.tokens_per_param * N)
  if type(D) ~= "number" or D <= 0 then T.usage_error("--tokens (or --tokens-per-param) must be a positive number") end
  local gpus, peak = o.gpus or 1, (o.peak_tflops or 989) * 1e12
  if gpus < 1 then T.usage_error("--gpus must be >= 1") end
  if peak <= 0 then T.usage_error("--peak-tflops must be positive") end
  local r = { params = N, tokens = D, flops = 6 * N * D, gpus = gpus, tokens_per_param = D / N }
  if o.tokens_per_sec then
    if o.tokens_per_sec <= 0 then T.usage_error("--tokens-per-sec must be positive") end
    r.mfu = 6 * N * o.tokens_per_sec / (gpus * peak)
    r.mfu_measured = true
  else
    r.mfu = o.mfu or 0.4
    if r.mfu <= 0 or r.mfu > 1 then T.usage_error("--mfu must be in (0, 1], got %s", tostring(r.mfu)) end
  end
  r.gpu_hours = r.flops / (peak * r.mfu * 3600)
  r.wall_hours = r.gpu_hours / gpus
  if o.price then r.cost = r.gpu_hours * o.price end
  local tpp = r.tokens_per_param
  r.regime = tpp < 10 and "under-trained for its size (tokens/param well below ~20): a smaller model on the same data is likely better"
    or tpp <= 40 and "near compute-optimal (~20 tokens/param)"
    or "over-trained relative to compute-optimal (>40 tokens/param): more compute per quality, cheaper inference"
  return r
end

function M.main(argv, out)
  local o = T.parse(argv, { params = "number", tokens = "number", tokens_per_param = "number", gpus = "number",
    peak_tflops = "number", mfu = "number", tokens_per_sec = "number", price = "number", json = "boolean" })
  if o.help then out(M.usage); return 0 end
  if not o.params then T.usage_error("--params is required") end
  local r = M.estimate(o)
  if o.json then out(require("torch.serialization.json").encode(r)); return 0 end
  out(("training FLOPs   6 x %.4g params x %.4g tokens = %.4g FLOPs"):format(r.params, r.tokens, r.flops))
  out(("MFU              %.1f %%%s"):format(100 * r.mfu, r.mfu_measured and " (from the measured throughput)" or " (assumed)"))
  out(("GPU-hours        %.4g"):format(r.gpu_hours))
  out(("wall-clock       %.4g h on %d GPU%s (%.3g days)"):format(r.wall_hours, r.gpus, r.gpus == 1 and "" or "s", r.wall_hours / 24))
  if r.cost then out(("cost             %.4g"):format(r.cost)) end
  out(("tokens/param     %.3g: %s"):format(r.tokens_per_param, r.regime))
  if r.mfu_measured and r.mfu > 1 then out("warning: MFU above 100 %: check --peak-tflops, --gpus or the throughput") end
  return 0
end

return M
