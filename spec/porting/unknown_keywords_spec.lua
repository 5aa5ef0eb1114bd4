--[[
  spec/porting/unknown_keywords_spec.lua — no fast path drops an argument silently. Every public
  Tensor method and torch function is called with a trailing keyword table it cannot take
  ({bogus_kw = 1}); each must raise, as Python raises "unexpected keyword argument". A fast path
  that read only the keys it knew (x:sort({stable = true}) sorted unstably; x:clone({memory_format
  = ...}) and x:float({memory_format = ...}) dropped the format) now hands such calls to ATen's op,
  which binds them or refuses them. The few exceptions are listed with their reason.

  Run:  build/ltorch /usr/bin/busted spec/porting/unknown_keywords_spec.lua
]]
local torch = require "torch"
local Tensor = require("torch._tensor").Tensor

-- Tensor methods that may accept a table argument, and why.
local TENSOR_EXCEPTIONS = {
  alias = "ltorch's internal second handle (not PyTorch API); takes no arguments",
  describe = "ltorch's own summary; its options table is free-form",
  grad_fn_name = "internal helper of the printer",
  is_freed = "ltorch's own; takes no arguments",
  tolist = "ltorch's tolist(flat) extension: any truthy value asks for a flat list",
  free = "ltorch's own explicit release",
  backward = "binds gradient, retain_graph, create_graph, inputs as PyTorch (its own spec)",
}

-- torch functions that take no tensor, or whose first argument is a table by design, and why.
local TORCH_EXCEPTIONS = {
  Size = "a torch.Size from a Lua list (the list is its argument)",
  broadcast_shapes = "its arguments are shapes, i.e. tables",
  free = "ltorch's own explicit release", collect = "ltorch's own GC step",
  memory_stats = "ltorch's own allocator statistics",
  get_rng_state = "takes no arguments", initial_seed = "takes no arguments",
  get_default_dtype = "takes no arguments", get_num_threads = "takes no arguments",
  is_grad_enabled = "takes no arguments", is_inference_mode_enabled = "takes no arguments",
  is_anomaly_enabled = "takes no arguments", is_tensor = "answers false for any non-tensor",
  clear_autocast_cache = "takes no arguments", is_autocast_cache_enabled = "takes no arguments",
  is_autocast_cpu_enabled = "takes no arguments", get_autocast_cpu_dtype = "takes no arguments",
  get_autocast_gpu_dtype = "takes no arguments",
  -- side effects or process state; checked by their own specs
  manual_seed = "own spec", seed = "own spec", set_num_threads = "own spec", set_num_interop_threads = "own spec",
  save = "own spec", breakpoint = "opens a debugger", set_default_dtype = "own spec",
  set_grad_enabled = "own spec", scope = "own spec", set_printoptions = "own spec",
}

local function public_functions(t)
  local names = {}
  for k, v in pairs(t) do
    if type(v) == "function" and type(k) == "string" and not k:match("^_") then names[#names + 1] = k end
  end
  table.sort(names)
  return names
end

describe("a keyword table a call cannot take", function()
  it("is an error for every Tensor method", function()
    local silent = {}
    for _, k in ipairs(public_functions(Tensor)) do
      if not TENSOR_EXCEPTIONS[k] and not k:match("^register") then
        local x = torch.randn(3, 4)
        if pcall(Tensor[k], x, { bogus_kw = 1 }) then silent[#silent + 1] = k end
      end
    end
    assert.are.same({}, silent)
  end)

  it("is an error for every torch function", function()
    local silent = {}
    for _, k in ipairs(public_functions(torch)) do
      if not TORCH_EXCEPTIONS[k] then
        local ok1 = pcall(torch[k], torch.randn(3, 4), { bogus_kw = 1 })
        local ok2 = pcall(torch[k], { bogus_kw = 1 })
        if ok1 or ok2 then silent[#silent + 1] = k end
      end
    end
    assert.are.same({}, silent)
  end)

  it("reaches ATen where the fast path lacks the keyword", function()
    local x = torch.tensor({ { 3, 1, 2 }, { 1, 1, 0 } }):float()
    local values, indices = x:sort({ stable = true, dim = 1 })
    assert.are.same({ { 1, 2, 3 }, { 0, 1, 1 } }, values:tolist())
    assert.are.same({ { 1, 2, 0 }, { 2, 0, 1 } }, indices:tolist())
    assert.are.same({ { 1, 2, 0 }, { 2, 0, 1 } }, x:argsort({ stable = true }):tolist())
    local y = torch.randn(2, 3, 4, 5)
    assert.are.same({ 60, 1, 15, 3 }, y:float({ memory_format = torch.channels_last }):stride())
    assert.are.same({ 60, 1, 15, 3 }, y:cpu({ memory_format = torch.channels_last }):stride())
  end)
end)
