--[[
  spec/autograd/extension_spec.lua — the native extension example (examples/extension/): builds
  libswish from the sources with cmake/ltorch_extension.cmake into temporary folders, loads it
  with ffi.load, and checks the op wrapped in a torch.autograd.Function: values and gradients
  match torch's silu (float32, non-contiguous input), its gradient passes gradcheck (float64), and
  a wrong dtype is a Lua error.

  Two builds: the default one (with the CUDA kernels of swish.cu when a CUDA toolkit is here:
  nvcc at /usr/local/cuda/bin, on PATH, or in $CUDACXX; about 15 s on two cores, else a second)
  and one with the toolkit turned off (-DCMAKE_CUDA_COMPILER=, a second). With a toolkit, the
  default library must export the four *_cuda launchers (nm -D), which proves the nvcc path ran;
  without one, its configure output must carry the "CUDA kernels ... were left out" STATUS line.
  Either way the CPU-only build must print that line, export no launcher, serve CPU tensors, and
  refuse a CUDA tensor with an error saying to rebuild with the toolkit (checked with a stand-in
  x whose device says cuda, passed to Swish.forward, so it runs without a GPU). CUDA tensors
  themselves (forward and backward against the CPU kernels: float32 within 1e-5, float64 within
  1e-12) run only where torch.cuda.is_available(); spec/gpu/cuda_spec.lua repeats that case on
  the GPU machine.

  Run:  build/ltorch /usr/bin/busted spec/autograd/extension_spec.lua   (needs cmake and a C compiler)
]]
local torch = require "torch"
local F = require "torch.nn.functional"

local root = debug.getinfo(1, "S").source:match("^@(.*)/spec/autograd/") or "."
if root:sub(1, 1) ~= "/" then root = os.getenv("PWD") .. "/" .. root end

local LAUNCHERS = { "swish_forward_f32_cuda", "swish_forward_f64_cuda",
                    "swish_backward_f32_cuda", "swish_backward_f64_cuda" }
local LEFT_OUT = "the CUDA kernels %(swish%.cu%) were left out"

local function sh(cmd)
  local p = io.popen(cmd .. " 2>&1; echo \"rc=$?\"")
  local out = p:read("*a")
  p:close()
  return out:match("rc=0%s*$") ~= nil, out
end

-- Whether the example's CMakeLists will find nvcc (its own search, plus $CUDACXX).
local function toolkit_here()
  local f = io.open("/usr/local/cuda/bin/nvcc")
  if f then f:close() return true end
  local cxx = os.getenv("CUDACXX")
  return (cxx ~= nil and cxx ~= "") or (sh("command -v nvcc"))
end

-- Configures and builds the example into a new temporary folder; returns the folder and the
-- configure output.
local function build_swish(extra)
  local dir = os.tmpname()
  os.remove(dir)
  local ok, out = sh(("cmake -S '%s/examples/extension' -B '%s' -DCMAKE_BUILD_TYPE=Release %s")
    :format(root, dir, extra or ""))
  assert(ok, "configuring the extension failed:\n" .. out)
  local built, bout = sh(("cmake --build '%s'"):format(dir))
  assert(built, "building the extension failed:\n" .. bout)
  return dir, out
end

local function exported(lib_path)
  local ok, out = sh("nm -D --defined-only '" .. lib_path .. "'")
  assert(ok, "nm failed:\n" .. out)
  local names = {}
  for name in out:gmatch("%s[TW]%s+([%w_]+)") do names[name] = true end
  return names
end

describe("extension example (examples/extension)", function()
  local swish, build, build_out, cpu_swish, cpu_build, cpu_out
  local with_cuda = toolkit_here()
  setup(function()
    build, build_out = build_swish()
    cpu_build, cpu_out = build_swish("-DCMAKE_CUDA_COMPILER=")
    package.path = root .. "/examples/extension/?.lua;" .. package.path
    swish = require("swish").load(build .. "/libswish.so")
    cpu_swish = require("swish").load(cpu_build .. "/libswish.so")
  end)
  teardown(function()
    for _, dir in ipairs({ build, cpu_build }) do os.execute("rm -rf '" .. dir .. "'") end
  end)

  it("matches silu's values and gradients (float32, non-contiguous input)", function()
    local base = torch.randn(6, 5, { requires_grad = true })
    local x = base:t()   -- a non-contiguous view
    local y = swish.apply(x)
    assert.equal("SwishBackward", y.grad_fn:name())
    local w = torch.randn(5, 6)
    ;(y * w):sum():backward()
    local b2 = base:detach():requires_grad_()
    local y2 = F.silu(b2:t())
    ;(y2 * w):sum():backward()
    assert.is_true((y:detach() - y2:detach()):abs():max():item() < 1e-6)
    assert.is_true((base.grad - b2.grad):abs():max():item() < 1e-6)
  end)

  it("its gradient passes gradcheck", function()
    local x = torch.randn(4, 3, { dtype = torch.float64, requires_grad = true })
    assert.is_true(torch.autograd.gradcheck(swish.apply, { x }))
  end)

  it("rejects dtypes the kernels do not have", function()
    local ok, err = pcall(swish.apply, torch.ones(3, { dtype = torch.int32 }))
    assert.is_false(ok)
    assert.matches("float32 or float64", err)
  end)

  it("builds the CUDA kernels with the toolkit, and says it left them out without", function()
    local names = exported(build .. "/libswish.so")
    if with_cuda then
      for _, name in ipairs(LAUNCHERS) do assert.is_true(names[name], name .. " not exported") end
      assert.is_true(swish.has_cuda())
      assert.is_nil(build_out:find(LEFT_OUT))
    else
      assert.matches(LEFT_OUT, build_out)
      assert.is_nil(names.swish_forward_f32_cuda)
      assert.is_false(swish.has_cuda())
    end
  end)

  it("builds CPU-only with the toolkit turned off, and that build still serves CPU tensors", function()
    assert.matches("ltorch_add_extension%(swish%): no CUDA compiler found, so " .. LEFT_OUT, cpu_out)
    local names = exported(cpu_build .. "/libswish.so")
    assert.is_true(names.swish_forward_f32)
    for _, name in ipairs(LAUNCHERS) do assert.is_nil(names[name], name .. " exported") end
    assert.is_false(cpu_swish.has_cuda())
    local x = torch.randn(7, { dtype = torch.float64, requires_grad = true })
    local y = cpu_swish.apply(x)
    y:sum():backward()
    local x2 = x:detach():requires_grad_()
    F.silu(x2):sum():backward()
    assert.is_true((y:detach() - F.silu(x2:detach())):abs():max():item() < 1e-12)
    assert.is_true((x.grad - x2.grad):abs():max():item() < 1e-12)
    assert.is_true(torch.autograd.gradcheck(cpu_swish.apply, { torch.randn(3, { dtype = torch.float64, requires_grad = true }) }))
  end)

  it("refuses a CUDA tensor when built without the CUDA kernels, saying to rebuild", function()
    -- A stand-in for a CUDA tensor: the device check comes before anything touches x's data.
    local fake = { device = { type = "cuda", index = 0 }, dtype = torch.float32 }
    local ok, err = pcall(cpu_swish.Swish.forward, nil, fake)
    assert.is_false(ok)
    assert.matches("swish: got a CUDA tensor, but .*libswish%.so was built without the CUDA kernels", err)
    assert.matches("rebuild the extension with the CUDA toolkit", err)
  end)

  it("rejects devices other than the CPU and CUDA", function()
    local fake = { device = setmetatable({ type = "mps" }, { __tostring = function() return "mps" end }),
                   dtype = torch.float32 }
    local ok, err = pcall(swish.Swish.forward, nil, fake)
    assert.is_false(ok)
    assert.matches("swish: expected a CPU or CUDA tensor, got device mps", err)
  end)

  it("runs on CUDA tensors as on the CPU (forward and backward, float32 1e-5, float64 1e-12)", function()
    if not torch.cuda.is_available() then pending("no CUDA device in this libtorch build / machine") return end
    if not with_cuda then pending("no CUDA toolkit here: the extension was built CPU-only") return end
    for _, case in ipairs({ { torch.float32, 1e-5 }, { torch.float64, 1e-12 } }) do
      local dtype, tol = case[1], case[2]
      local base = torch.randn(37, 29, { dtype = dtype })
      local w = torch.randn(29, 37, { dtype = dtype })
      local xc, xg = base:clone():requires_grad_(), base:to("cuda"):requires_grad_()
      local yc, yg = swish.apply(xc:t()), swish.apply(xg:t())   -- non-contiguous views
      assert.equal("cuda", yg.device.type)
      ;(yc * w):sum():backward()
      ;(yg * w:to("cuda")):sum():backward()
      assert.equal("cuda", xg.grad.device.type)
      local fwd = (yg:detach():to("cpu") - yc:detach()):abs():max():item()
      local bwd = (xg.grad:to("cpu") - xc.grad):abs():max():item()
      assert.is_true(fwd <= tol, ("%s forward differs by %g"):format(tostring(dtype), fwd))
      assert.is_true(bwd <= tol, ("%s backward differs by %g"):format(tostring(dtype), bwd))
    end
    -- More elements than one grid of 4096 x 256 threads: the grid-stride loop covers the rest.
    local big = torch.randn(4096 * 256 * 2 + 3)
    local diff = (swish.apply(big:to("cuda")):to("cpu") - swish.apply(big)):abs():max():item()
    assert.is_true(diff <= 1e-5, "grid-stride forward differs by " .. diff)
  end)
end)
