--[[
  tools/tool.lua — command line for the helper tools (lua/torch/tools): env, estimate-memory,
  estimate-compute, compare-runs, check-splits, find-nan-batches, inspect-checkpoint,
  check-dataset, profile-dataloader, benchmark-model, serving-capacity.

  Usage:  build/ltorch tools/tool.lua NAME [options]      (NAME --help for each; no NAME: the list)
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
