--[[
  tools/doctor.lua — command line for torch.doctor: run the training checklist on an ordinary
  training script (run for a few optimizer steps under instrumentation), on a file returning the
  setup table documented in lua/torch/doctor/setup.lua, or on a recipe's builders (--recipe:
  the adapters in recipes/doctor_setup.lua, which this file hands to the library).

  Usage:  build/ltorch tools/doctor.lua [options] SCRIPT.lua [the script's args]
          build/ltorch tools/doctor.lua [options] --recipe classifier [-- recipe flags]
          (--help lists the options; the implementation is lua/torch/doctor/cli.lua)
  Exit:   0 nothing failed (warnings allowed), 1 a check failed, 2 usage or setup error.
]]
-- recipes/ is required as "recipes.*": put the checkout (this file's parent folder) on the path
local root = (arg and arg[0] or ""):match("^(.*)/tools/[^/]*$") or "."
package.path = root .. "/?.lua;" .. package.path

os.exit(require("torch.doctor.cli").main(arg or {}, "ltorch tools/doctor.lua", require("recipes.doctor_setup")))
