--[[
  torch.cli.doctor — `ltorch doctor ...`: the runtime runs this file when the script argument is the
  bare word "doctor" and no file of that name exists. It runs tools/doctor.lua from the source tree
  with the same arguments (arg[1..] and ...).

  Usage:  ltorch doctor --help
]]
local dir = (_LTORCH and _LTORCH.lua_dir or "lua") .. "/../tools/doctor.lua"
local chunk, err = loadfile(dir)
if not chunk then
  io.stderr:write("ltorch doctor: cannot load " .. dir .. " (" .. tostring(err) .. "); the tools ship with the source tree\n")
  os.exit(2)
end
return chunk(...)
