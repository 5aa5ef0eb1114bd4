--[[
  tools/doctor.lua — command line for torch.doctor: run the training checklist on an ordinary
  training script (run for a few optimizer steps under instrumentation), on a file returning the
  setup table documented in lua/torch/doctor/setup.lua, or on the main recipe's builders.

  Usage:  build/ltorch tools/doctor.lua [options] SCRIPT.lua [the script's args]
          build/ltorch tools/doctor.lua [options] --recipe classifier [-- recipe flags]
          (--help lists the options; the implementation is lua/torch/doctor/cli.lua)
  Exit:   0 nothing failed (warnings allowed), 1 a check failed, 2 usage or setup error.
]]
os.exit(require("torch.doctor.cli").main(arg or {}, "ltorch doctor"))
