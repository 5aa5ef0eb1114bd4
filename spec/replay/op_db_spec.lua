--[[
  spec/replay/op_db_spec.lua — PyTorch's op_db (OpInfo) replayed through ltorch's public API
  (issue #36): the cases of tools/replay/gen_op_db.py (cached under ~/.cache/ltorch/replay/),
  run in child processes (spec/replay/runner.lua), checked against spec/replay/exceptions.lua
  (spec/replay/report.lua). Prints the figures; docs/REPLAY.md has them with the failures
  (build/ltorch tools/replay/write_doc.lua).
  Run: build/ltorch /usr/bin/busted -o spec/support/summary_output.lua spec/replay/op_db_spec.lua
]]
require("spec.replay.report").spec("ops", { describe = describe, it = it, pending = pending, assert = assert })
