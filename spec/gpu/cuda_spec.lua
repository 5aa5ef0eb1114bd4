--[[
  spec/gpu/cuda_spec.lua — ltorch on a CUDA device: moves, ops, autocast, a training step.

  Every check runs on "cuda" where torch.cuda.is_available() (a CUDA libtorch that sees a GPU),
  and also on "cpu" everywhere: there the "against the CPU" comparisons are trivially equal, but
  each spec's own code (the API it calls, its tolerances, the training loop) runs, so a mistake in
  it shows in CI rather than first on a rarely lent GPU machine. The CUDA-only specs (device
  control, float16 autocast, fused GradScaler kernels) are pending without a GPU.
  bench/gpu/check.sh runs this file on the GPU machine after building ltorch against that
  machine's libtorch.

  Covers: the collector's GPU trigger (device results counted, 64 MiB garbage tensors collected
  as a loop goes), tensors created on and moved to the GPU and back (values, dtype, device, is_cuda,
  tostring, item), ops computed on the GPU against the same ops on the CPU (elementwise,
  reductions, matmul, conv2d, softmax, indexing), the error for operands on two devices,
  torch.cuda.synchronize / current_device / set_device / manual_seed(_all) (seeded GPU randomness
  repeats), autograd through GPU ops, autocast on "cuda" in float16 and bfloat16 (matmul and
  linear in the low type, softmax kept in float32, the state restored after the region),
  GradScaler's fused CUDA kernels (clean steps keep the scale, an inf gradient halves it and skips
  the step), a full MLP training step with AdamW on the GPU matching the same steps on the CPU,
  Module:to("cuda") keeping parameter identity, a checkpoint of GPU tensors loaded back
  (to the CPU with map_location), and the native extension example's kernels (examples/extension,
  built here with cmake: swish.cu with nvcc where a GPU is seen, else CPU-only) against its CPU
  kernels, forward and backward (float32 within 1e-5, float64 within 1e-12).

  Tolerances: float32 GPU kernels reorder sums (and cuDNN convolutions may use TF32), so values
  are compared with atol/rtol 1e-3 (2e-2 for the convolution); half-precision results are only
  checked for dtype and a loose closeness.

  Run:  build/ltorch /usr/bin/busted spec/gpu/cuda_spec.lua   (pending without a GPU; needs cmake)
]]
local torch = require "torch"
local nn, F, optim = torch.nn, torch.nn.functional, torch.optim

local has_gpu = torch.cuda.is_available()
local DEVICES = has_gpu and { "cpu", "cuda" } or { "cpu" }

local function max_abs_diff(a, b)
  return (a:to("cpu", torch.float32) - b:to("cpu", torch.float32)):abs():max():item()
end

-- a and b (any devices) agree within atol + rtol * |b|, elementwise.
local function assert_close(a, b, atol, rtol, what)
  local ca, cb = a:to("cpu", torch.float64), b:to("cpu", torch.float64)
  local excess = ((ca - cb):abs() - (cb:abs() * rtol + atol)):max():item()
  assert(excess <= 0, ("%s: differs by more than atol %g + rtol %g (max |a-b| %g)"):format(
    what or "values", atol, rtol, max_abs_diff(a, b)))
end

describe("CUDA availability", function()
  it("reports consistently whether a device is there", function()
    if has_gpu then
      assert.is_true(torch.cuda.device_count() >= 1)
    else
      assert.are.equal(0, torch.cuda.device_count())
    end
  end)

  it("synchronizes, reports and sets the current device", function()
    if not has_gpu then pending("no CUDA device in this libtorch build / machine") return end
    torch.cuda.synchronize()
    torch.cuda.synchronize(0)
    torch.cuda.synchronize("cuda:0")
    assert.are.equal(0, torch.cuda.current_device())
    torch.cuda.set_device(0)
    assert.are.equal(0, torch.cuda.current_device())
    local n = torch.cuda.device_count()
    local ok, err = pcall(torch.cuda.set_device, n)
    assert.is_false(ok)
    assert.matches("cuda.set_device: .*" .. n, err)
  end)

  it("refuses operands on two devices with a clear error", function()
    if not has_gpu then pending("no CUDA device in this libtorch build / machine") return end
    local ok, err = pcall(function() return torch.ones(2) + torch.ones(2):cuda() end)
    assert.is_false(ok)
    assert.matches("same device", err)
  end)

  it("repeats seeded randomness with torch.cuda.manual_seed and manual_seed_all", function()
    if not has_gpu then pending("no CUDA device in this libtorch build / machine") return end
    torch.cuda.manual_seed(11)
    local c = torch.rand(100, { device = "cuda" })
    torch.cuda.manual_seed_all(11)
    local d = torch.rand(100, { device = "cuda" })
    assert.are.equal(0, max_abs_diff(c, d))
  end)
end)

for _, DEV in ipairs(DEVICES) do
  local on_gpu = DEV == "cuda"
  local function is_on(t) return t.device.type == DEV end

  describe("on " .. DEV .. ": tensors and ops", function()
    it("creates tensors on the device and moves them both ways", function()
      local z = torch.zeros(2, 3, { device = DEV })
      assert.is_true(is_on(z))
      assert.are.equal(on_gpu, z.is_cuda)
      assert.are.equal(on_gpu and "cuda:0" or "cpu", tostring(z.device))
      local x = torch.arange(6, { dtype = torch.float32 }):view(2, 3)
      local g = x:to(DEV)
      assert.is_true(is_on(g))
      assert.are.same(x:tolist(), g:cpu():tolist())
      assert.are.same(x:tolist(), g:tolist())
      assert.are.equal(5, g[1][2]:item())
      local h = x:to(DEV):to(torch.float64)
      assert.are.equal(torch.float64, h.dtype)
      assert.is_true(is_on(h))
      if on_gpu then assert.matches("device='cuda:0'", tostring(g)) end
    end)

    it("computes ops as the CPU does", function()
      torch.manual_seed(0)
      local a, b = torch.randn(64, 32), torch.randn(32, 16)
      local ga, gb = a:to(DEV), b:to(DEV)
      assert_close(ga:matmul(gb), a:matmul(b), 1e-3, 1e-3, "matmul")
      assert_close((ga * 2 + 1):sin(), (a * 2 + 1):sin(), 1e-5, 1e-5, "elementwise")
      assert_close(ga:sum(1), a:sum(1), 1e-4, 1e-4, "sum")
      assert_close(F.softmax(ga, -1), F.softmax(a, -1), 1e-6, 1e-4, "softmax")
      assert_close(ga[{ { 3, 10 }, 5 }], a[{ { 3, 10 }, 5 }], 0, 0, "indexing")
      local img, w = torch.randn(4, 3, 16, 16), torch.randn(8, 3, 3, 3)
      local conv = F.conv2d(img:to(DEV), w:to(DEV), nil, 1, 1)
      assert.are.same({ 4, 8, 16, 16 }, conv:size())
      assert_close(conv, F.conv2d(img, w, nil, 1, 1), 2e-2, 2e-2, "conv2d")
      assert.are.equal(a:argmax():item(), ga:argmax():item())
    end)

    it("repeats seeded randomness (torch.manual_seed seeds every device)", function()
      torch.manual_seed(7)
      local a = torch.randn(100, { device = DEV })
      torch.manual_seed(7)
      local b = torch.randn(100, { device = DEV })
      assert.is_true(is_on(a))
      assert.are.equal(0, max_abs_diff(a, b))
      torch.manual_seed(8)
      assert.is_true(max_abs_diff(a, torch.randn(100, { device = DEV })) > 0)
    end)

    it("runs autograd through the device's ops", function()
      local x = torch.randn(5, 3, { device = DEV, requires_grad = true })
      local y = (x * x):sum()
      y:backward()
      assert.is_true(is_on(x.grad))
      assert_close(x.grad, x:detach() * 2, 1e-6, 1e-6, "grad")
    end)
  end)

  describe("on " .. DEV .. ": memory", function()
    it("counts the bytes of device results (GPU memory is not the CPU allocator's)", function()
      local before = torch.memory_stats().device_bytes_made
      local t = torch.empty(1000, { device = DEV })
      local made = torch.memory_stats().device_bytes_made - before
      if on_gpu then assert.is_true(made >= 4000, "device_bytes_made grew by " .. made) else assert.are.equal(0, made) end
      t:free()
    end)

    it("collects dropped 64 MiB tensors as the loop goes, not after 1,024 of them", function()
      torch.collect()
      local before = torch.memory_stats().live_handles
      for _ = 1, 100 do
        local t = torch.empty(16 * 1024 * 1024, { device = DEV })   -- 64 MiB, dropped at once
        assert(t ~= nil)
      end
      local grown = torch.memory_stats().live_handles - before
      assert.is_true(grown < 20, grown .. " of 100 dropped tensors still held")
    end)
  end)

  describe("on " .. DEV .. ": autocast", function()
    for _, case in ipairs({ { "float16", torch.float16 }, { "bfloat16", torch.bfloat16 } }) do
      local name, dtype = case[1], case[2]
      it("computes matmul and linear in " .. name .. ", softmax in float32, and restores the state", function()
        -- CPU autocast takes float16 only in newer libtorch (1.13: bfloat16 only); ltorch asks
        -- libtorch (spec/amp/autocast_spec.lua checks that answer against PyTorch's).
        if not on_gpu and dtype == torch.float16 then
          local cpu_fp16 = pcall(torch.autocast, "cpu", function() end, { dtype = torch.float16 })
          if not cpu_fp16 then pending("this libtorch's CPU autocast takes no float16") return end
        end
        local a, b = torch.randn(16, 16, { device = DEV }), torch.randn(16, 16, { device = DEV })
        local lin = nn.Linear(16, 4):to(DEV)
        local mm, out, sm, inside = torch.autocast(DEV, function()
          return a:matmul(b), lin(a), F.softmax(a, -1), torch.is_autocast_enabled(DEV)
        end, { dtype = dtype })
        assert.is_true(inside)
        assert.are.equal(dtype, mm.dtype)
        assert.are.equal(dtype, out.dtype)
        assert.are.equal(torch.float32, sm.dtype)
        assert_close(mm, a:matmul(b), 0.2, 2e-2, "autocast matmul")
        assert.is_false(torch.is_autocast_enabled(DEV))
        assert.are.equal(torch.float32, a:matmul(b).dtype)
      end)
    end

    it("runs a backward pass from an autocast forward into float32 parameters", function()
      local lin = nn.Linear(8, 2):to(DEV)
      local x = torch.randn(4, 8, { device = DEV })
      local loss = torch.autocast(DEV, function() return lin(x):float():pow(2):mean() end)
      loss:backward()
      assert.are.equal(torch.float32, lin.weight.grad.dtype)
      assert.is_true(is_on(lin.weight.grad))
    end)
  end)

  describe("on " .. DEV .. ": GradScaler" .. (on_gpu and " (fused kernels)" or ""), function()
    it("keeps the scale over clean steps, halves it and skips the step on an inf gradient", function()
      local w = torch.ones(4, { device = DEV, requires_grad = true })
      local opt = optim.SGD({ w }, { lr = 0.1 })
      local scaler = torch.amp.GradScaler(DEV, { init_scale = 1024, growth_interval = 1000 })
      local x = torch.tensor({ 1, 2, 3, 4 }, { dtype = torch.float32, device = DEV })
      opt:zero_grad()
      scaler:scale((w * x):sum()):backward()
      assert_close(w.grad, x * 1024, 0, 0, "scaled grad")
      scaler:step(opt)
      scaler:update()
      assert_close(w:detach(), torch.ones(4, { device = DEV }) - x * 0.1, 1e-6, 1e-6, "stepped weights")
      assert.are.equal(1024, scaler:get_scale())
      local before = w:detach():clone()
      opt:zero_grad()
      scaler:scale((w * torch.tensor({ 1, math.huge, 1, 1 }, { device = DEV })):sum()):backward()
      assert.is_nil(scaler:step(opt))
      scaler:update()
      assert.are.equal(512, scaler:get_scale())
      assert.are.equal(0, max_abs_diff(w:detach(), before))
    end)
  end)

  describe("on " .. DEV .. ": training", function()
    local function mlp()
      torch.manual_seed(3)
      return nn.Sequential(nn.Linear(20, 32), nn.ReLU(), nn.Linear(32, 4))
    end

    it("moves a model in place: the same parameter objects, now on the device", function()
      local model = mlp()
      local first = model:parameters()[1]
      model:to(DEV)
      assert.are.equal(first, model:parameters()[1])
      assert.is_true(is_on(first))
      assert.is_true(first.requires_grad)
      model:cpu()
      assert.are.equal("cpu", first.device.type)
    end)

    it("takes AdamW steps that match the same steps on the CPU", function()
      torch.manual_seed(5)
      local x, y = torch.randn(64, 20), torch.randint(4, { 64 })
      local cpu_model, dev_model = mlp(), mlp():to(DEV)
      local cpu_opt = optim.AdamW(cpu_model:parameters(), { lr = 1e-2 })
      local dev_opt = optim.AdamW(dev_model:parameters(), { lr = 1e-2 })
      local gx, gy = x:to(DEV), y:to(DEV)
      local first_loss, last_loss
      for step = 1, 10 do
        local cl = F.cross_entropy(cpu_model(x), y)
        cpu_opt:zero_grad(); cl:backward(); cpu_opt:step()
        local gl = F.cross_entropy(dev_model(gx), gy)
        dev_opt:zero_grad(); gl:backward(); dev_opt:step()
        assert.is_true(math.abs(cl:item() - gl:item()) < 1e-3, "loss differs at step " .. step)
        first_loss = first_loss or gl:item()
        last_loss = gl:item()
      end
      assert.is_true(last_loss < first_loss)
      local cp, gp = cpu_model:parameters(), dev_model:parameters()
      for i = 1, #cp do
        assert.is_true(is_on(gp[i]))
        assert_close(gp[i]:detach(), cp[i]:detach(), 1e-3, 1e-3, "parameter " .. i)
      end
    end)

    it("checkpoints the device's tensors and loads them back to the CPU with map_location", function()
      local path = os.tmpname()
      local t = torch.randn(3, 4):to(DEV)
      torch.save({ w = t, step = 3 }, path)
      local back = torch.load(path, { map_location = "cpu" })
      os.remove(path)
      assert.are.equal(3, back.step)
      assert.are.equal("cpu", back.w.device.type)
      assert.are.equal(0, max_abs_diff(back.w, t))
    end)
  end)
end

-- examples/extension's swish (a native op behind torch.autograd.Function) on each device, against
-- the same op on the CPU; spec/autograd/extension_spec.lua checks its build and CPU behaviour.
describe("the native extension example (examples/extension)", function()
  local swish, dir
  setup(function()
    local root = debug.getinfo(1, "S").source:match("^@(.*)/spec/gpu/") or "."
    if root:sub(1, 1) ~= "/" then root = os.getenv("PWD") .. "/" .. root end
    dir = os.tmpname()
    os.remove(dir)
    local cuda_off = has_gpu and "" or "-DCMAKE_CUDA_COMPILER="   -- no GPU: skip the nvcc build
    local p = io.popen(("cmake -S '%s/examples/extension' -B '%s' -DCMAKE_BUILD_TYPE=Release %s && "
      .. "cmake --build '%s' 2>&1; echo \"rc=$?\""):format(root, dir, cuda_off, dir))
    local out = p:read("*a")
    p:close()
    assert(out:match("rc=0%s*$"), "building the extension failed:\n" .. out)
    package.path = root .. "/examples/extension/?.lua;" .. package.path
    swish = require("swish").load(dir .. "/libswish.so")
  end)
  teardown(function() if dir then os.execute("rm -rf '" .. dir .. "'") end end)

  for _, DEV in ipairs(DEVICES) do
    it("on " .. DEV .. ": matches its CPU kernels forward and backward (float32 1e-5, float64 1e-12)", function()
      if DEV == "cuda" and not swish.has_cuda() then
        pending("libswish was built without its CUDA kernels: no CUDA toolkit (nvcc) on this machine")
        return
      end
      for _, case in ipairs({ { torch.float32, 1e-5 }, { torch.float64, 1e-12 } }) do
        local dtype, tol = case[1], case[2]
        local base = torch.randn(37, 29, { dtype = dtype })
        local w = torch.randn(29, 37, { dtype = dtype })
        local xc, xd = base:clone():requires_grad_(), base:to(DEV):requires_grad_()
        local yc, yd = swish.apply(xc:t()), swish.apply(xd:t())   -- non-contiguous views
        assert.are.equal(DEV, yd.device.type)
        ;(yc * w):sum():backward()
        ;(yd * w:to(DEV)):sum():backward()
        assert.are.equal(DEV, xd.grad.device.type)
        assert_close(yd:detach(), yc:detach(), tol, 0, tostring(dtype) .. " forward")
        assert_close(xd.grad, xc.grad, tol, 0, tostring(dtype) .. " backward")
      end
      -- More elements than one CUDA grid (4096 blocks x 256 threads): the grid-stride loop.
      local big = torch.randn(4096 * 256 * 2 + 3)
      assert_close(swish.apply(big:to(DEV)), swish.apply(big), 1e-5, 0, "grid-stride forward")
    end)
  end
end)
