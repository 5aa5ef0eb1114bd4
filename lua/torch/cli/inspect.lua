--[[
  torch.cli.inspect — `ltorch inspect ...`: the runtime runs this file when the script argument is the
  bare word "inspect" and no file of that name exists. It runs tools/inspect.lua from the source tree
  with the same arguments (arg[1..] and ...).

  Usage:  ltorch inspect --help
]]
local dir = (_LTORCH and _LTORCH.lua_dir or "lua") .. "/../tools/inspect.lua"
local chunk, err = loadfile(dir)
if not chunk then
  io.stderr:write("ltorch inspect: cannot load " .. dir .. " (" .. tostring(err) .. "); the tools ship with the source tree\n")
  os.exit(2)
end
return chunk(...)
