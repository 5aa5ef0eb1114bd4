--[[
  spec/gpu/cuda_graphs_spec.lua — CUDA graphs from Lua on a GPU (lua/torch/_cuda_graphs.lua,
  bindings/lt_cuda_graph.cpp): a whole training step of a small MLP (forward, backward, SGD step)
  captured once with torch.cuda.graph and replayed matches the same steps run eagerly (SGD, and
  AdamW with capturable = true), and
  torch.cuda.make_graphed_callables gives a module whose forward and backward replay graphs with
  the eager module's outputs and gradients, alone or as PyTorch's tuple of callables.

  Without a GPU every check is pending (spec/torch/cuda_api_spec.lua checks the no-GPU errors
  against PyTorch's). bench/gpu/check.sh runs this file on the GPU machine.

  Run:  build/ltorch /usr/bin/busted spec/gpu/cuda_graphs_spec.lua
]]
local torch = require "torch"
local nn = torch.nn

local has_gpu = torch.cuda.is_available()

-- A small MLP and its static input/target tensors on the GPU, seeded.
local function setup_model(seed)
  torch.manual_seed(seed)
  local model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 8)):to("cuda")
  local x = torch.randn(16, 32, { device = "cuda" })
  local y = torch.randn(16, 8, { device = "cuda" })
  return model, x, y
end

local function sgd_step(model, opt, x, y)
  local loss = torch.nn.functional.mse_loss(model(x), y)
  loss:backward()
  opt:step()
  return loss
end

-- 8 eager steps against 3 warm-up steps, one captured step and 5 replays; make_opt(params)
local function captured_matches_eager(make_opt)
  local model_e, x, y = setup_model(0)
  local opt_e = make_opt(model_e:parameters())
  for _ = 1, 8 do opt_e:zero_grad({ set_to_none = false }); sgd_step(model_e, opt_e, x, y) end

  local model, sx, sy = setup_model(0)
  local opt = make_opt(model:parameters())
  -- warm up on a side stream (3 steps), as PyTorch's docs do, then capture one step
  local s = torch.cuda.Stream()
  s:wait_stream(torch.cuda.current_stream())
  torch.cuda.stream(s, function()
    for _ = 1, 3 do opt:zero_grad({ set_to_none = false }); sgd_step(model, opt, sx, sy) end
  end)
  torch.cuda.current_stream():wait_stream(s)
  local g = torch.cuda.CUDAGraph()
  local static_loss
  opt:zero_grad({ set_to_none = false })
  torch.cuda.graph(g, function()
    assert.is_true(torch.cuda.is_current_stream_capturing())
    static_loss = sgd_step(model, opt, sx, sy)
  end)
  -- the capture queued but did not run the step: 3 warmup steps done; 5 replays make 8
  for _ = 1, 5 do
    for _, p in ipairs(model:parameters()) do p.grad:zero_() end
    g:replay()
  end
  torch.cuda.synchronize()
  local pe, pg = model_e:parameters(), model:parameters()
  for i = 1, #pe do
    assert.is_true(torch.allclose(pe[i], pg[i], 1e-4, 1e-5), "parameter " .. i)
  end
  assert.is_true(static_loss:item() > 0)
  local pool = g:pool()
  assert.are.equal(2, #pool)
  g:reset()
end

describe("CUDA graphs", function()
  it("replays a captured training step with the eager step's results", function()
    if not has_gpu then pending("no CUDA device") return end
    captured_matches_eager(function(params) return torch.optim.SGD(params, { lr = 0.1 }) end)
  end)

  it("captures AdamW's step with capturable = true (bias corrections on the device)", function()
    if not has_gpu then pending("no CUDA device") return end
    captured_matches_eager(function(params) return torch.optim.AdamW(params, { lr = 1e-2, capturable = true }) end)
  end)

  it("graphs a module's forward and backward with make_graphed_callables", function()
    if not has_gpu then pending("no CUDA device") return end
    local model, x = setup_model(1)
    local ref_model = setup_model(1)
    x.requires_grad = true
    local graphed = torch.cuda.make_graphed_callables(model, { x })
    local x2 = torch.randn(16, 32, { device = "cuda", requires_grad = true })
    local out = graphed(x2)
    local x3 = x2:detach():clone():requires_grad_(true)
    local ref = ref_model(x3)
    assert.is_true(torch.allclose(out, ref, 1e-4, 1e-5))
    out:sum():backward()
    ref:sum():backward()
    assert.is_true(torch.allclose(x2.grad, x3.grad, 1e-4, 1e-5))
    local p, q = model:parameters(), ref_model:parameters()
    -- the warmup's autograd.grad does not accumulate into .grad; the graphed backward does once
    for i = 1, #p do assert.is_true(torch.allclose(p[i].grad, q[i].grad, 1e-4, 1e-5), "grad " .. i) end
  end)

  it("graphs a chain of modules in one memory pool with the tuple form", function()
    if not has_gpu then pending("no CUDA device") return end
    torch.manual_seed(2)
    local m1, m2 = nn.Linear(32, 64):to("cuda"), nn.Linear(64, 8):to("cuda")
    torch.manual_seed(2)
    local r1, r2 = nn.Linear(32, 64):to("cuda"), nn.Linear(64, 8):to("cuda")
    local x = torch.randn(16, 32, { device = "cuda", requires_grad = true })
    local h = torch.randn(16, 64, { device = "cuda", requires_grad = true })
    local g = torch.cuda.make_graphed_callables({ m1, m2 }, { { x }, { h } })
    assert.are.equal(2, #g)
    local x2 = torch.randn(16, 32, { device = "cuda" })
    local out = g[2](g[1](x2))
    local ref = r2(r1(x2))
    assert.is_true(torch.allclose(out, ref, 1e-4, 1e-5))
    out:sum():backward()
    ref:sum():backward()
    local p, q = m1:parameters(), r1:parameters()
    for i = 1, #p do assert.is_true(torch.allclose(p[i].grad, q[i].grad, 1e-4, 1e-5), "first module, grad " .. i) end
  end)
end)
