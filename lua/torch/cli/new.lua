--[[
  torch.cli.new — `ltorch new`: create a project from a template. The runtime runs this file for
  the bare word "new" (no file of that name in the way); tools/new.lua runs it from the source tree.

      ltorch new TEMPLATE DIR                       e.g. ltorch new classifier /tmp/x
      ltorch new --list                             the templates, one line each
      build/ltorch tools/new.lua TEMPLATE DIR       the same

  Copies templates/TEMPLATE/ into DIR (which must not exist, or be empty), replacing
  {{name}} in the files by DIR's last component, then prints the first command to run.
  templates/_common/ (flags.lua: config.lua overridden by --key value flags) goes into every
  project first; a template's own file of the same name wins.
  Each template's README.md supplies both lines --list and that hint use: its title
  ("# {{name}} — DESCRIPTION") and a line "First run: `COMMAND`".
  Errors (unknown template, DIR not empty) are one line and exit status 2.

  Where the templates are: data beside the Lua library, `<lua_dir>/../templates` — the
  checkout's templates/ (lua_dir is its lua/), or an install's share/ltorch/templates (lua_dir
  share/ltorch/lua; CMakeLists.txt installs both). The runtime says where lua_dir is (_LTORCH).
]]
local lua_dir = _LTORCH and _LTORCH.lua_dir
if not lua_dir then
  io.stderr:write("new: the templates are found from the ltorch runtime's Lua folder; run it with ltorch\n")
  os.exit(2)
end
local templates = lua_dir .. "/../templates"

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

-- templates/_common holds files every project gets (flags.lua); a template's own file of the
-- same name wins. Names starting with "_" are not templates.
local function list()
  local out = {}
  for _, t in ipairs(lines("ls -1 " .. q(templates) .. " 2>/dev/null")) do
    if t:sub(1, 1) ~= "_" then out[#out + 1] = t end
  end
  return out
end

-- description, first command: from templates/NAME/README.md (title and "First run:" line).
local function about(name)
  local f = io.open(templates .. "/" .. name .. "/README.md", "rb")
  local text = f and f:read("*a") or ""
  if f then f:close() end
  return (text:match("^#[^\n]-— ([^\n]+)") or ""):gsub(" %(ltorch%)$", ""),
    text:match("\nFirst run: `([^`\n]+)`") or "ltorch train.lua --epochs 1"
end

local function main()
  local name, dir = arg[1], arg[2]
  if name == "--list" then
    for _, t in ipairs(list()) do print(("%-12s %s"):format(t, (about(t)))) end
    return
  end
  if not name or not dir then fail("expected TEMPLATE and DIR") end
  local src = templates .. "/" .. name
  if name:sub(1, 1) == "_" or #lines("test -d " .. q(src) .. " && echo yes") == 0 then
    fail(("unknown template '%s' (available: %s)"):format(name, table.concat(list(), ", ")))
  end
  if #lines("ls -A " .. q(dir) .. " 2>/dev/null") > 0 then fail("destination is not empty: " .. dir) end
  local common = templates .. "/_common"
  if not os.execute("mkdir -p " .. q(dir) .. " && cp -R " .. q(common) .. "/. " .. q(dir)
      .. " && cp -R " .. q(src) .. "/. " .. q(dir)) then
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
  local _, first = about(name)
  print(("created %s from templates/%s; next: cd %s && %s"):format(dir, name, dir, first))
end

main()
