--[[
  tools/new.lua — create a project from a template in templates/.

      build/ltorch tools/new.lua TEMPLATE DIR       e.g. build/ltorch tools/new.lua classifier /tmp/x
      build/ltorch tools/new.lua --list

  Copies templates/TEMPLATE/ into DIR (which must not exist, or be empty), replacing
  {{name}} in the files by DIR's last component. Then: cd DIR && ltorch train.lua.
  Errors (unknown template, DIR not empty) are one line and exit status 2.
]]
local root = (arg and arg[0] or ""):match("^(.*)/tools/[^/]*$") or "."
local templates = root .. "/templates"

local function fail(msg)
  io.stderr:write("new: " .. msg .. "\nusage: ltorch tools/new.lua TEMPLATE DIR   (ltorch tools/new.lua --list)\n")
  os.exit(2)
end

local function q(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

local function lines(cmd)
  local p, out = io.popen(cmd), {}
  for l in p:lines() do out[#out + 1] = l end
  p:close()
  return out
end

local function list() return lines("ls -1 " .. q(templates) .. " 2>/dev/null") end

local function main()
  local name, dir = arg[1], arg[2]
  if name == "--list" then for _, t in ipairs(list()) do print(t) end return end
  if not name or not dir then fail("expected TEMPLATE and DIR") end
  local src = templates .. "/" .. name
  if #lines("test -d " .. q(src) .. " && echo yes") == 0 then
    fail(("unknown template '%s' (available: %s)"):format(name, table.concat(list(), ", ")))
  end
  if #lines("ls -A " .. q(dir) .. " 2>/dev/null") > 0 then fail("destination is not empty: " .. dir) end
  if not os.execute("mkdir -p " .. q(dir) .. " && cp -R " .. q(src) .. "/. " .. q(dir)) then
    fail("could not copy into " .. dir)
  end
  local project = dir:gsub("/+$", ""):match("[^/]+$") or dir
  for _, file in ipairs(lines("find " .. q(dir) .. " -type f")) do
    local f = assert(io.open(file, "rb"))
    local text = f:read("*a")
    f:close()
    if text:find("{{name}}", 1, true) then
      f = assert(io.open(file, "wb"))
      f:write((text:gsub("{{name}}", (project:gsub("%%", "%%%%")))))
      f:close()
    end
  end
  print(("created %s from templates/%s; next: cd %s && ltorch train.lua --epochs 1"):format(dir, name, dir))
end

main()
