--[[
  torch.cli.run — `ltorch run ...`: the runtime runs this file when the script argument is the
  bare word "run" and no file of that name exists. It runs tools/run.lua from the source tree
  with the same arguments (arg[1..] and ...).

  Usage:  ltorch run --help
]]
local dir = (_LTORCH and _LTORCH.lua_dir or "lua") .. "/../tools/run.lua"
local chunk, err = loadfile(dir)
if not chunk then
  io.stderr:write("ltorch run: cannot load " .. dir .. " (" .. tostring(err) .. "); the tools ship with the source tree\n")
  os.exit(2)
end
return chunk(...)
