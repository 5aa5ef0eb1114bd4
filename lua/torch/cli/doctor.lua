--[[
  torch.cli.doctor — `ltorch doctor ...`: the runtime runs this file when the script argument is the
  bare word "doctor" and no file of that name exists. It runs torch.doctor.cli with the script's
  arguments, as tools/doctor.lua does from the source tree.

  Usage:  ltorch doctor --help
]]
os.exit(require("torch.doctor.cli").main(arg or {}, "ltorch doctor"))
