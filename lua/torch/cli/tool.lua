--[[
  torch.cli.tool — `ltorch tool NAME ...`: the runtime runs this file when the script argument is
  the bare word "tool" and no file of that name exists. It runs the helper tool NAME
  (lua/torch/tools) with the rest of the arguments; tools/tool.lua is the same from the source tree.

  Usage:  ltorch tool NAME [options]      (NAME --help for each; no NAME: the list)
  Exit:   0 fine, 1 the tool found a problem, 2 usage error or malformed input.
]]
local tools = require "torch.tools"
local argv = arg or {}
local name = argv[1]
if name == nil or name == "-h" or name == "--help" then
  tools.list()
  os.exit(name == nil and 2 or 0)
end
local rest = {}
for i = 2, #argv do rest[#rest + 1] = argv[i] end
os.exit(tools.run(name, rest))
