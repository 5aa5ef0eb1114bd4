--[[
  tools/new.lua — create a project from a template in templates/, from the source tree. The
  implementation is lua/torch/cli/new.lua (`ltorch new`).

  Usage:  build/ltorch tools/new.lua TEMPLATE DIR       e.g. build/ltorch tools/new.lua classifier /tmp/x
          build/ltorch tools/new.lua --list             the templates, one line each
  Exit:   0 created, 2 unknown template or DIR not empty.
]]
require "torch.cli.new"
