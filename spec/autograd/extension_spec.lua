--[[
  spec/autograd/extension_spec.lua — the native extension example (examples/extension/): builds
  libswish from the sources with cmake/ltorch_extension.cmake (configure + build into a temporary
  folder, C only, about a second), loads it with ffi.load, and checks the op wrapped in a
  torch.autograd.Function: values and gradients match torch's silu (float32, non-contiguous
  input), its gradient passes gradcheck (float64), and a wrong dtype is a Lua error.

  Run:  build/ltorch /usr/bin/busted spec/autograd/extension_spec.lua   (needs cmake and a C compiler)
]]
local torch = require "torch"
local F = require "torch.nn.functional"

local root = debug.getinfo(1, "S").source:match("^@(.*)/spec/autograd/") or "."
if root:sub(1, 1) ~= "/" then root = os.getenv("PWD") .. "/" .. root end

local function sh(cmd)
  local p = io.popen(cmd .. " 2>&1; echo \"rc=$?\"")
  local out = p:read("*a")
  p:close()
  return out:match("rc=0%s*$") ~= nil, out
end

describe("extension example (examples/extension)", function()
  local swish, build
  setup(function()
    build = os.tmpname()
    os.remove(build)
    local ok, out = sh(("cmake -S '%s/examples/extension' -B '%s' -DCMAKE_BUILD_TYPE=Release >/dev/null && cmake --build '%s'")
      :format(root, build, build))
    assert(ok, "building the extension failed:\n" .. out)
    package.path = root .. "/examples/extension/?.lua;" .. package.path
    swish = require("swish").load(build .. "/libswish.so")
  end)
  teardown(function() if build then os.execute("rm -rf '" .. build .. "'") end end)

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
end)
