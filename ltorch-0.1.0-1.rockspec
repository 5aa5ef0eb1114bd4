-- ltorch-0.1.0-1.rockspec — LuaRocks package: `require "torch"` from a stock LuaJIT.
--
-- Builds libltorch_bindings (needs libtorch, e.g. Debian's libtorch-dev, and CMake) and installs
-- the Lua library into the rock's Lua tree; torch._C finds the bindings on package.cpath.
--   luarocks make ltorch-0.1.0-1.rockspec        (from a checkout; LuaJIT 2.1 only)
package = "ltorch"
version = "0.1.0-1"
source = { url = "git+https://example.invalid/ltorch.git", tag = "v0.1.0" }
description = {
  summary = "PyTorch's engine (libtorch) scriptable from Lua: tensors, autograd, nn, optim",
  detailed = [[
ltorch binds libtorch through the LuaJIT FFI with PyTorch's names and semantics
(torch.randn(2, 3), x:matmul(y), nn.Linear(128, 10), optim.AdamW(...)).]],
  license = "BSD-3-Clause",
}
dependencies = { "lua == 5.1" }  -- LuaJIT reports itself as Lua 5.1; the FFI is required
build = {
  type = "cmake",
  variables = {
    CMAKE_BUILD_TYPE = "Release",
    CMAKE_INSTALL_PREFIX = "$(PREFIX)",
    LTORCH_INSTALL_LUA_DIR = "$(LUADIR)",
    LTORCH_INSTALL_LIB_DIR = "$(LIBDIR)",
  },
}
