--[[
  guarded_state_sweep.lua — an adversary's sweep: an error raised at every point of a library call
  that changes thread state, then a check that no state leaked and that the next operation works.

  Why: a host's watchdog (a count hook that raises) or its allocator limit (a memory error) can
  raise at any Lua instruction. PyTorch restores grad mode, inference mode, autocast and the like
  whatever raised; ltorch must too (runtime/guard.c).

  What: for each case (no_grad, enable_grad, inference_mode, autocast, detect_anomaly,
  Function.apply, backward through a Lua Function, checkpoint, an optimizer step, a DataLoader
  iteration with workers, torch.save, skip_init's RNG fork, torch.random.fork_rng), first counts the case's points
  (instructions, or allocations of the Lua state), then for each point n runs the case with a
  fault armed at n:
    mode "hook":  debug.sethook(raise, "", n) — the same count hook a host sets with
                  lua_sethook(L, hook, LUA_MASKCOUNT, n); it raises once;
    mode "alloc": host.fail_allocation(n) — the embedding host (guarded_state_host.c) makes the
                  n-th allocation of this Lua state fail once (LuaJIT raises "not enough memory").
  After each round: grad mode, inference mode, autocast (cpu: enabled, dtype; cuda: enabled; cache),
  anomaly mode, default dtype and device, deterministic flags (and, for cases that draw no random
  numbers, the CPU generator's state) must equal what they were, and a plain backward must give the
  right gradient, and after a round that raised the same case, unfaulted, must work again (no
  cache or queue left half-made). A round that leaks gets the state put back by hand (where that
  is possible) so the rounds count independently.
  Points: every one when a case has at most SWEEP_EVERY (700); otherwise the first SWEEP_FULL
  (100), then SWEEP_STRIDED (60) more at an even stride (the CI budget; the DataLoader, whose
  every iteration starts threads, 8 then 12).

  How: ltorch spec/runtime/guarded_state_sweep.lua hook [case]
       (the host runs it with mode alloc). Prints one line per case,
         "<case> <recovered>/<rounds> points=<total>"
       then the first leak of each case, and "sweep: ok" or "sweep: LEAKED".
]]
local torch = require "torch"
local nn, optim = torch.nn, torch.optim
local data = torch.utils.data
local checkpoint = require("torch.utils.checkpoint").checkpoint

local arg = rawget(_G, "arg")
local MODE = arg and arg[1] or rawget(_G, "MODE_ARG") or "hook"
local ONLY = arg and arg[2] or rawget(_G, "ONLY_ARG")
local EVERY = tonumber(os.getenv("SWEEP_EVERY") or 700)
local FULL, STRIDED = tonumber(os.getenv("SWEEP_FULL") or 100), tonumber(os.getenv("SWEEP_STRIDED") or 60)
local host = rawget(_G, "host")
if MODE == "alloc" then assert(host and host.fail_allocation, "mode alloc runs under guarded_state_host") end

jit.off()   -- count hooks see every instruction only in the interpreter

---------------------------------------------------------------- state
local function rng_bytes() return torch.get_rng_state():tolist() end

local function snapshot(with_rng)
  return {
    grad = torch.is_grad_enabled(),
    inference = torch.is_inference_mode_enabled(),
    autocast_cpu = torch.is_autocast_enabled("cpu"),
    autocast_cpu_dtype = tostring(torch.amp.get_autocast_dtype("cpu")),
    autocast_cuda = torch.is_autocast_enabled("cuda"),
    autocast_cache = torch.is_autocast_cache_enabled(),
    anomaly = torch.is_anomaly_enabled(),
    default_dtype = tostring(torch.get_default_dtype()),
    default_device = tostring(torch.get_default_device()),
    deterministic = torch.are_deterministic_algorithms_enabled(),
    deterministic_warn = torch.is_deterministic_algorithms_warn_only_enabled(),
    rng = with_rng and table.concat(rng_bytes(), ",") or nil,
  }
end

local function diff(a, b)
  local out = {}
  for k, v in pairs(a) do
    if b[k] ~= v then out[#out + 1] = ("%s %s -> %s"):format(k, tostring(v):sub(1, 20), tostring(b[k]):sub(1, 20)) end
  end
  table.sort(out)
  return table.concat(out, "; ")
end

-- Puts back what a leaking round left changed (inference mode cannot be left by hand).
local function reset(base)
  torch.set_grad_enabled(base.grad)
  torch.autograd.set_detect_anomaly(base.anomaly)
  jit.off()
end

local function next_op_ok()
  local ok, err = pcall(function()
    local x = torch.ones(3, { requires_grad = true })
    ;(x * 3):sum():backward()
    assert(x.grad ~= nil and x.grad:eq(3):all():item(), "wrong gradient")
  end)
  return ok, err
end

---------------------------------------------------------------- cases
local Double = torch.autograd.Function()
function Double.forward(ctx, x) ctx:save_for_backward(x); return x * 2 end
function Double.backward(_, g) return g * 2 end

local x = torch.randn(4, { requires_grad = true })
local a, b = torch.randn(3, 3), torch.randn(3, 3)
local model = nn.Linear(3, 2)
local opt = optim.SGD(model:parameters(), { lr = 0.1, momentum = 0.9 })
model(torch.randn(5, 3)):sum():backward()
local loader = data.DataLoader(data.TensorDataset(torch.arange(8):float()), { batch_size = 4, num_workers = 2 })
local tmp = os.tmpname()
local ckpt_y   -- checkpoint's output, made unhooked before each backward round

local cases = {
  { "no_grad", function() return torch.no_grad(function() return (x * 2):sum() end) end, rng = true },
  { "enable_grad", function()
    return torch.no_grad(function() return torch.enable_grad(function() return (x * 2):sum() end) end)
  end, rng = true },
  { "inference_mode", function() return torch.inference_mode(function() return x * 2 end) end, rng = true },
  { "autocast", function() return torch.autocast("cpu", function() return torch.mm(a, b) end) end, rng = true },
  { "detect_anomaly", function()
    return torch.autograd.detect_anomaly(function() return (x * 2):sum() end)
  end, rng = true },
  { "Function.apply", function() return Double.apply(x) end, rng = true },
  { "Function.backward", function() Double.apply(x):sum():backward() end, rng = true },
  { "checkpoint", function() ckpt_y:backward() end, rng = true, before = function()
    ckpt_y = checkpoint(function(t) return torch.nn.functional.dropout(t, 0.5, true):sum() end, x)
    torch.rand(1)   -- the generator moves on: backward's recompute must put it back after
  end },
  { "optimizer.step", function() opt:step() end, rng = true },
  -- a new iterator starts its worker threads: fewer points, within the CI budget
  { "DataLoader", function() for batch in loader:iter() do assert(batch[1]:numel() == 4) end end, full = 8, strided = 12 },
  { "torch.save", function() torch.save({ w = a, n = 3 }, tmp) end, rng = true },
  { "skip_init", function() return nn.utils.skip_init(nn.Linear, 3, 2) end, rng = true },
  { "fork_rng", function() return torch.random.fork_rng(function() return torch.rand(3) end) end, rng = true },
}

---------------------------------------------------------------- faults
-- The fault must land inside the round (its pcall), never in the sweep's own code after it: the
-- hook raises only while `round` is on the stack, and disarming outside it is protected.
local fired, round
local function in_round()
  for level = 2, 400 do
    local info = debug.getinfo(level, "f")
    if info == nil then return false end
    if info.func == round then return true end
  end
  return false
end
local function raise()
  debug.sethook()
  if not in_round() then return end
  fired = true
  error("count hook fired", 2)
end

local function arm(n)
  fired = false
  if MODE == "hook" then debug.sethook(raise, "", n) else host.fail_allocation(n) end
end
local function disarm()
  if MODE == "hook" then
    debug.sethook()
  else
    local ok, f = pcall(host.fail_allocation, 0)   -- true when the armed allocation failed
    if not ok then   -- it failed in this very call: disarm again
      pcall(host.fail_allocation, 0)
      f = true
    end
    fired = fired or f
  end
end

-- The number of points (instructions or allocations) one unfaulted run of fn takes.
local function count_points(case)
  if case.before then case.before() end
  local n = 0
  if MODE == "hook" then
    debug.sethook(function() n = n + 1 end, "", 1)
    case[2]()
    debug.sethook()
  else
    local before = host.allocations()
    case[2]()
    n = host.allocations() - before
  end
  return n
end

local function points(total, case)
  total = total + 3   -- arm's own few points come first
  local list = {}
  local full = total <= EVERY and total or case.full or FULL
  local strided = case.strided or STRIDED
  for n = 1, math.min(total, full) do list[#list + 1] = n end
  if total > full then
    local step = math.max(1, math.ceil((total - full) / strided))
    for n = full + step, total, step do list[#list + 1] = n end
  end
  return list
end

---------------------------------------------------------------- the sweep
local leaked_any = false
for _, case in ipairs(cases) do
  local name = case[1]
  if ONLY == nil or ONLY == name then
    local total = count_points(case)
    local recovered, rounds, first_leak = 0, 0, nil
    for _, n in ipairs(points(total, case)) do
      if case.before then case.before() end
      local base = snapshot(case.rng)
      round = function() arm(n); case[2](); disarm() end
      local ok, err = pcall(round)
      disarm()   -- the fault fired (and is gone) or the case ended before it
      rounds = rounds + 1
      local now = snapshot(case.rng)
      local d = diff(base, now)
      local op_ok, op_err = next_op_ok()
      if op_ok and not ok then   -- and the same operation, unfaulted, works again
        if case.before then case.before() end
        op_ok, op_err = pcall(case[2])
      end
      if d == "" and op_ok then
        recovered = recovered + 1
      else
        first_leak = first_leak or ("%s at point %d (%s): %s%s"):format(name, n, ok and "no error" or tostring(err):sub(1, 60),
          d, op_ok and "" or "; next op: " .. tostring(op_err):sub(1, 80))
        reset(base)
      end
    end
    print(("%s %d/%d points=%d"):format(name, recovered, rounds, total))
    if first_leak then
      leaked_any = true
      print("  first leak: " .. first_leak)
    end
  end
end
os.remove(tmp)
print(leaked_any and "sweep: LEAKED" or "sweep: ok")
io.stdout:flush()
if arg then os.exit(leaked_any and 1 or 0) end
return not leaked_any
