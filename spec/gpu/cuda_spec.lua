--[[
  spec/gpu/cuda_spec.lua — ltorch on a CUDA device: moves, ops, autocast, a training step.

  Runs only where torch.cuda.is_available() (a CUDA libtorch that sees a GPU); everywhere else
  every spec is pending, and CI (no GPU) reports them as such. bench/gpu/check.sh runs this file
  on the GPU machine after building ltorch against that machine's libtorch.

  Covers: tensors created on and moved to the GPU and back (values, dtype, device, is_cuda,
  tostring, item), ops computed on the GPU against the same ops on the CPU (elementwise,
  reductions, matmul, conv2d, softmax, indexing), the error for operands on two devices,
  torch.cuda.synchronize / current_device / set_device / manual_seed(_all) (seeded GPU randomness
  repeats), autograd through GPU ops, autocast on "cuda" in float16 and bfloat16 (matmul and
  linear in the low type, softmax kept in float32, the state restored after the region),
  GradScaler's fused CUDA kernels (clean steps keep the scale, an inf gradient halves it and skips
  the step), a full MLP training step with AdamW on the GPU matching the same steps on the CPU,
  Module:to("cuda") keeping parameter identity, and a checkpoint of GPU tensors loaded back
  (to the CPU with map_location).

  Tolerances: float32 GPU kernels reorder sums (and cuDNN convolutions may use TF32), so values
  are compared with atol/rtol 1e-3 (2e-2 for the convolution); half-precision results are only
  checked for dtype and a loose closeness.

  Run:  build/ltorch /usr/bin/busted spec/gpu/cuda_spec.lua   (pending without a GPU)
]]
local torch = require "torch"
local nn, F, optim = torch.nn, torch.nn.functional, torch.optim

local has_gpu = torch.cuda.is_available()

-- An `it` that runs only with a GPU.
local function it_gpu(name, fn)
  it(name, function()
    if not has_gpu then pending("no CUDA device in this libtorch build / machine") return end
    fn()
  end)
end

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

describe("CUDA device", function()
  it("reports consistently whether it is available", function()
    if has_gpu then
      assert.is_true(torch.cuda.device_count() >= 1)
    else
      assert.are.equal(0, torch.cuda.device_count())
    end
  end)

  it_gpu("creates tensors on the GPU and moves them both ways", function()
    local z = torch.zeros(2, 3, { device = "cuda" })
    assert.is_true(z.is_cuda)
    assert.are.equal("cuda:0", tostring(z.device))
    local x = torch.arange(6, { dtype = torch.float32 }):view(2, 3)
    local g = x:to("cuda")
    assert.is_true(g.is_cuda)
    assert.are.same(x:tolist(), g:cpu():tolist())
    assert.are.same(x:tolist(), g:tolist())
    assert.are.equal(5, g[2][3]:item())
    local h = x:cuda():to(torch.float64)
    assert.are.equal(torch.float64, h.dtype)
    assert.is_true(h.is_cuda)
    assert.matches("device='cuda:0'", tostring(g))
  end)

  it_gpu("computes ops as the CPU does", function()
    torch.manual_seed(0)
    local a, b = torch.randn(64, 32), torch.randn(32, 16)
    local ga, gb = a:cuda(), b:cuda()
    assert_close(ga:matmul(gb), a:matmul(b), 1e-3, 1e-3, "matmul")
    assert_close((ga * 2 + 1):sin(), (a * 2 + 1):sin(), 1e-5, 1e-5, "elementwise")
    assert_close(ga:sum(1), a:sum(1), 1e-4, 1e-4, "sum")
    assert_close(F.softmax(ga, 2), F.softmax(a, 2), 1e-6, 1e-4, "softmax")
    assert_close(ga[{ { 3, 10 }, 5 }], a[{ { 3, 10 }, 5 }], 0, 0, "indexing")
    local img, w = torch.randn(4, 3, 16, 16), torch.randn(8, 3, 3, 3)
    assert_close(F.conv2d(img:cuda(), w:cuda(), nil, 1, 1), F.conv2d(img, w, nil, 1, 1), 2e-2, 2e-2, "conv2d")
    assert.are.equal(a:argmax():item(), ga:argmax():item())
  end)

  it_gpu("refuses operands on two devices with a clear error", function()
    local ok, err = pcall(function() return torch.ones(2) + torch.ones(2):cuda() end)
    assert.is_false(ok)
    assert.matches("same device", err)
  end)

  it_gpu("synchronizes, reports and sets the current device", function()
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

  it_gpu("repeats seeded GPU randomness (torch.manual_seed and torch.cuda.manual_seed)", function()
    torch.manual_seed(7)
    local a = torch.randn(100, { device = "cuda" })
    torch.manual_seed(7)
    local b = torch.randn(100, { device = "cuda" })
    assert.are.equal(0, max_abs_diff(a, b))
    torch.cuda.manual_seed(11)
    local c = torch.rand(100, { device = "cuda" })
    torch.cuda.manual_seed_all(11)
    local d = torch.rand(100, { device = "cuda" })
    assert.are.equal(0, max_abs_diff(c, d))
    assert.is_true(max_abs_diff(a, c) > 0)
  end)

  it_gpu("runs autograd through GPU ops", function()
    local x = torch.randn(5, 3, { device = "cuda", requires_grad = true })
    local y = (x * x):sum()
    y:backward()
    assert.is_true(x.grad.is_cuda)
    assert_close(x.grad, x:detach() * 2, 1e-6, 1e-6, "grad")
  end)
end)

describe("autocast on cuda", function()
  for _, case in ipairs({ { "float16", torch.float16 }, { "bfloat16", torch.bfloat16 } }) do
    local name, dtype = case[1], case[2]
    it_gpu("computes matmul and linear in " .. name .. ", softmax in float32, and restores the state", function()
      local a, b = torch.randn(16, 16, { device = "cuda" }), torch.randn(16, 16, { device = "cuda" })
      local lin = nn.Linear(16, 4):cuda()
      local mm, out, sm, inside = torch.autocast("cuda", function()
        return a:matmul(b), lin(a), F.softmax(a, 2), torch.is_autocast_enabled("cuda")
      end, { dtype = dtype })
      assert.is_true(inside)
      assert.are.equal(dtype, mm.dtype)
      assert.are.equal(dtype, out.dtype)
      assert.are.equal(torch.float32, sm.dtype)
      assert_close(mm, a:matmul(b), 0.1, 2e-2, "autocast matmul")
      assert.is_false(torch.is_autocast_enabled("cuda"))
      assert.are.equal(torch.float32, a:matmul(b).dtype)
    end)
  end

  it_gpu("runs a backward pass from an autocast forward into float32 parameters", function()
    local lin = nn.Linear(8, 2):cuda()
    local x = torch.randn(4, 8, { device = "cuda" })
    local loss = torch.autocast("cuda", function() return lin(x):float():pow(2):mean() end)
    loss:backward()
    assert.are.equal(torch.float32, lin.weight.grad.dtype)
    assert.is_true(lin.weight.grad.is_cuda)
  end)
end)

describe("GradScaler on cuda (fused kernels)", function()
  it_gpu("keeps the scale over clean steps, halves it and skips the step on an inf gradient", function()
    local w = torch.ones(4, { device = "cuda", requires_grad = true })
    local opt = optim.SGD({ w }, { lr = 0.1 })
    local scaler = torch.amp.GradScaler({ init_scale = 1024, growth_interval = 1000 })
    local x = torch.tensor({ 1, 2, 3, 4 }, { dtype = torch.float32, device = "cuda" })
    opt:zero_grad()
    scaler:scale((w * x):sum()):backward()
    assert_close(w.grad, x * 1024, 0, 0, "scaled grad")
    scaler:step(opt)
    scaler:update()
    assert_close(w:detach(), torch.ones(4, { device = "cuda" }) - x * 0.1, 1e-6, 1e-6, "stepped weights")
    assert.are.equal(1024, scaler:get_scale())
    local before = w:detach():clone()
    opt:zero_grad()
    scaler:scale((w * torch.tensor({ 1, math.huge, 1, 1 }, { device = "cuda" })):sum()):backward()
    assert.is_nil(scaler:step(opt))
    scaler:update()
    assert.are.equal(512, scaler:get_scale())
    assert.are.equal(0, max_abs_diff(w:detach(), before))
  end)
end)

describe("training on cuda", function()
  local function mlp()
    torch.manual_seed(3)
    return nn.Sequential(nn.Linear(20, 32), nn.ReLU(), nn.Linear(32, 4))
  end

  it_gpu("moves a model in place: the same parameter objects, now on the GPU", function()
    local model = mlp()
    local first = model:parameters()[1]
    model:cuda()
    assert.are.equal(first, model:parameters()[1])
    assert.is_true(first.is_cuda)
    assert.is_true(first.requires_grad)
    model:cpu()
    assert.is_false(first.is_cuda)
  end)

  it_gpu("takes AdamW steps on the GPU that match the same steps on the CPU", function()
    torch.manual_seed(5)
    local x, y = torch.randn(64, 20), torch.randint(4, { 64 })
    local cpu_model, gpu_model = mlp(), mlp():cuda()
    local cpu_opt = optim.AdamW(cpu_model:parameters(), { lr = 1e-2 })
    local gpu_opt = optim.AdamW(gpu_model:parameters(), { lr = 1e-2 })
    local gx, gy = x:cuda(), y:cuda()
    local first_loss, last_loss
    for step = 1, 10 do
      local cl = F.cross_entropy(cpu_model(x), y)
      cpu_opt:zero_grad(); cl:backward(); cpu_opt:step()
      local gl = F.cross_entropy(gpu_model(gx), gy)
      gpu_opt:zero_grad(); gl:backward(); gpu_opt:step()
      assert.is_true(math.abs(cl:item() - gl:item()) < 1e-3, "loss differs at step " .. step)
      first_loss = first_loss or gl:item()
      last_loss = gl:item()
    end
    assert.is_true(last_loss < first_loss)
    local cp, gp = cpu_model:parameters(), gpu_model:parameters()
    for i = 1, #cp do
      assert.is_true(gp[i].is_cuda)
      assert_close(gp[i]:detach(), cp[i]:detach(), 1e-3, 1e-3, "parameter " .. i)
    end
  end)

  it_gpu("checkpoints GPU tensors and loads them back, to the CPU with map_location", function()
    local dir = os.tmpname()
    os.remove(dir)
    local path = dir .. ".pt"
    local t = torch.randn(3, 4):cuda()
    torch.save({ w = t, step = 3 }, path)
    local back = torch.load(path, { map_location = "cpu" })
    os.remove(path)
    assert.are.equal(3, back.step)
    assert.is_false(back.w.is_cuda)
    assert.are.equal(0, max_abs_diff(back.w, t))
  end)
end)
