--[[
  tools/inspect.lua — prints what a checkpoint holds (tensor keys, shapes, dtypes, plain values).
  The implementation is lua/torch/cli/inspect.lua (`ltorch inspect`); this file runs it from the
  source tree.

  Use: build/ltorch tools/inspect.lua CHECKPOINT(.pt | .safetensors)
]]
require "torch.cli.inspect"
