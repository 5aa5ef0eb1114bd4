--[[
  tools/doctor.lua — command line for torch.doctor: run the training checklist on a setup script
  (a Lua file returning the setup table documented in lua/torch/doctor/setup.lua), or on the
  main recipe (recipes/train_classifier.lua).

  Usage:  build/ltorch tools/doctor.lua SETUP.lua [--fix] [--quiet] [--seed N] [--only id,id]
                                 [--out-dir DIR] [--device DEV] [--scan N] [--json FILE]
          build/ltorch tools/doctor.lua --recipe classifier [options] [-- recipe flags]
          (--help lists the options; the implementation is lua/torch/doctor/cli.lua)
  Exit:   0 nothing failed (warnings allowed), 1 a check failed, 2 usage or setup error.
]]
os.exit(require("torch.doctor.cli").main(arg or {}, "ltorch tools/doctor.lua"))
