--[[
  spec/replay/data.lua — the replay cases, generated once per PyTorch and generator version and
  cached outside the clone (issue #36).

  Why: generating the cases takes the reference PyTorch a minute (op_db) and tens of megabytes;
  like the venv, they live under the user's cache directory, not in the repository.

  What: load(kind) with kind "ops" | "modules" | "optims" returns the decoded cases
  {torch, entries, cases} of tools/replay/gen_{op,module,optim}_db.py, from
  ${XDG_CACHE_HOME:-~/.cache}/ltorch/replay/torch<version>-<hash>/<kind>.json, where <hash> is
  that of the generator and tools/replay/replay_common.py: editing either regenerates. Missing
  files are generated with the .venv's Python (spec/support/pytorch.lua), written to a temporary
  name and renamed, so an interrupted run leaves no half file. Without PyTorch: nil, the reason.

  Use: local data = require "spec.replay.data"
       local d, why = data.load("ops")
]]
local cjson = require "cjson"
local pytorch = require "spec.support.pytorch"

local ROOT = (debug.getinfo(1, "S").source:match("^@(.*)/spec/replay/[^/]*$") or ".")
local GEN = { ops = "gen_op_db.py", modules = "gen_module_db.py", optims = "gen_optim_db.py" }

local M = {}

local function quote(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

local function capture(cmd)
  local p = assert(io.popen(cmd, "r"))
  local out = p:read("*a")
  p:close()
  return (out:gsub("%s+$", ""))
end

local version
local function torch_version()
  if version == nil then
    version = capture(quote(pytorch.python) .. " -c 'import torch; print(torch.__version__)' 2>/dev/null")
  end
  return version
end

-- The cache file for kind (its directory created).
function M.path(kind)
  local dir = ROOT .. "/tools/replay/"
  local hash = capture(("cat %s %s | sha256sum"):format(quote(dir .. GEN[kind]),
    quote(dir .. "replay_common.py"))):sub(1, 12)
  local cache = (os.getenv("XDG_CACHE_HOME") or ((os.getenv("HOME") or "/tmp") .. "/.cache"))
    .. "/ltorch/replay/torch" .. torch_version() .. "-" .. hash
  os.execute("mkdir -p " .. quote(cache))
  return cache .. "/" .. kind .. ".json"
end

function M.load(kind)
  if not pytorch.available() then
    return nil, "no PyTorch at " .. pytorch.python .. " (bash scripts/setup.sh)"
  end
  local path = M.path(kind)
  local f = io.open(path, "rb")
  if not f then
    local tmp = path .. ".tmp"
    local status = capture(("%s %s > %s 2>%s.log; echo $?"):format(quote(pytorch.python),
      quote(ROOT .. "/tools/replay/" .. GEN[kind]), quote(tmp), quote(tmp)))
    if status ~= "0" then
      error(("tools/replay/%s failed (status %s); its output: %s.log"):format(GEN[kind], status, tmp))
    end
    os.rename(tmp, path)
    os.remove(tmp .. ".log")
    f = assert(io.open(path, "rb"))
  end
  local text = f:read("*a")
  f:close()
  return cjson.decode(text)
end

return M
