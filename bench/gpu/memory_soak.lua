--[[
  bench/gpu/memory_soak.lua — does a long training loop keep device memory flat, and how often
  does it make the Lua collector run? An MLP (784-256-10, AdamW, batch 64) trains for N steps
  on the device; every `every` steps the script records the device's allocated bytes
  (torch.cuda.memory_allocated on CUDA, the CPU allocator's live bytes on the CPU) and the number
  of completed Lua GC cycles so far (a finalizable sentinel re-armed at each cycle's end).

  Prints one line per sample and a verdict: flat when the peak of the second half of the samples
  is within 5 % (+1 MiB) of the peak of the first half; exits 1 otherwise. GC cycles per step = cycles / steps.

  Run:  build/ltorch bench/gpu/memory_soak.lua [--device cuda] [--steps 2000] [--every 200]
        (bench/gpu/check.sh runs it on the GPU; on the CPU it is its own dry run)
]]
local torch = require "torch"
local nn, optim, F = torch.nn, torch.optim, torch.nn.functional

local opts = { device = "cpu", steps = 2000, every = 200 }
local i = 1
while arg and arg[i] do
  local key = arg[i]:match("^%-%-(.+)$")
  if not key or opts[key] == nil or arg[i + 1] == nil then
    io.stderr:write("usage: memory_soak.lua [--device D] [--steps N] [--every K]\n")
    os.exit(2)
  end
  opts[key] = type(opts[key]) == "number" and tonumber(arg[i + 1]) or arg[i + 1]
  i = i + 2
end

local device = torch.device(opts.device)
local on_cuda = device.type == "cuda"

local cycles = 0
local function arm()
  local sentinel = newproxy(true)
  getmetatable(sentinel).__gc = function() cycles = cycles + 1; arm() end
end
arm()

local function allocated()
  if on_cuda then return torch.cuda.memory_allocated(device) end
  return torch.memory_stats().live_bytes
end

torch.manual_seed(0)
local model = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10)):to(device)
local opt = optim.AdamW(model:parameters(), { lr = 1e-3 })
local x = torch.randn(64, 784, { device = device })
local y = torch.randint(0, 10, { 64 }, { device = device })

local samples = {}
for step = 1, opts.steps do
  opt:zero_grad()
  local loss = F.cross_entropy(model(x), y)
  loss:backward()
  opt:step()
  if step % opts.every == 0 then
    if on_cuda then torch.cuda.synchronize() end
    samples[#samples + 1] = { step = step, bytes = allocated(), cycles = cycles }
    print(("step %5d  allocated %10d bytes  GC cycles %5d (%.3f per step)"):format(
      step, samples[#samples].bytes, cycles, cycles / step))
  end
end

if #samples < 2 then
  print("memory_soak: too few samples (raise --steps or lower --every)")
  os.exit(2)
end
-- Garbage waiting for the collector makes single samples swing; the peaks of the two halves don't.
local half = math.floor(#samples / 2)
local first, last = 0, 0
for k, s in ipairs(samples) do
  if k <= half then first = math.max(first, s.bytes) else last = math.max(last, s.bytes) end
end
local flat = last <= first * 1.05 + 2 ^ 20
print(("memory_soak on %s: %d steps, peak allocated %d (first half) -> %d bytes (second half): %s; %.3f GC cycles per step")
  :format(tostring(device), opts.steps, first, last, flat and "flat" or "GROWING", cycles / opts.steps))
os.exit(flat and 0 or 1)
