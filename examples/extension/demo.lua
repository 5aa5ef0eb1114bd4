--[[
  examples/extension/demo.lua — runs the swish extension: compares it with torch's silu and runs
  gradcheck on it.   LTORCH_SWISH_LIB=<build>/libswish.so build/ltorch examples/extension/demo.lua
]]
package.path = debug.getinfo(1, "S").source:match("^@(.*/)") .. "?.lua;" .. package.path
local torch = require "torch"
local swish = require("swish").load()
local x = torch.randn(4, 5, { requires_grad = true })
local y = swish.apply(x)
y:sum():backward()
local x2 = x:detach():requires_grad_()
torch.nn.functional.silu(x2):sum():backward()
print("forward max diff ", (y - torch.nn.functional.silu(x2)):abs():max():item())
print("backward max diff", (x.grad - x2.grad):abs():max():item())
print("gradcheck        ", torch.autograd.gradcheck(swish.apply, { torch.randn(3, 4, { dtype = torch.float64, requires_grad = true }) }))
