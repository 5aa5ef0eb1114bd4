--[[
  tools/run.lua — ltorch's torchrun from the source tree: starts one process per rank for
  distributed training and watches them. The implementation is lua/torch/cli/run.lua
  (`ltorch run`); its header has the environment each rank gets and the failure policy.

  Usage:  build/ltorch tools/run.lua [--nproc-per-node N] [--nnodes M --node-rank R]
              [--master-addr A] [--master-port P] [--kill-timeout S] [--timeout S]
              [--max-restarts N] [--no-prefix] script.lua [args...]
]]
require "torch.cli.run"
