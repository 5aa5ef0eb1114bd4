--[[
  tools/tool.lua — command line for the helper tools (lua/torch/tools): env, estimate-memory,
  estimate-compute, compare-runs, check-splits, find-nan-batches, inspect-checkpoint,
  check-dataset, profile-dataloader, benchmark-model, serving-capacity. The implementation is
  lua/torch/cli/tool.lua (`ltorch tool`); this file runs it from the source tree.

  Usage:  build/ltorch tools/tool.lua NAME [options]      (NAME --help for each; no NAME: the list)
  Exit:   0 fine, 1 the tool found a problem, 2 usage error or malformed input.
]]
require "torch.cli.tool"
