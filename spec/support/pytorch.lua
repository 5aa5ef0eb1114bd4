-- spec/support/pytorch.lua — run a PyTorch snippet from a spec and get its result back.
--
-- Why: parity specs compare ltorch against PyTorch itself, on the same libtorch: the
-- PyTorch 2.11 that scripts/setup.sh installs into the project's virtual environment
-- (`.venv`, a link to a venv under the user's cache directory) and builds ltorch against.
--
-- What: `pytorch.python` is that interpreter (`$LTORCH_PYTHON` overrides it; specs that
-- run Python themselves use it too). `pytorch.run(code)` writes `import torch, json` +
-- code to a temp file, runs it with `pytorch.python`, and decodes the ONE JSON value the code prints on stdout with
-- lua-cjson (JSON arrays become 1-based Lua arrays, null becomes cjson.null). A Python
-- failure raises a Lua error carrying Python's stderr (the exception text).
-- `pytorch.available()` says whether `import torch` works (cached).
--
-- Use:
--   local pytorch = require "spec.support.pytorch"
--   local sums = pytorch.run [[print(json.dumps(torch.arange(6).reshape(2, 3).sum(0).tolist()))]]
--   -- sums == {3, 5, 7}

local cjson = require "cjson"

-- The repository root, from this file's own path (spec/support/pytorch.lua).
local ROOT = (debug.getinfo(1, "S").source:match("^@(.*)/spec/support/[^/]*$") or ".")

local M = { python = os.getenv("LTORCH_PYTHON") or (ROOT .. "/.venv/bin/python") }

local PRELUDE = "import torch, json\n"

local function slurp(path)
  local f = io.open(path, "rb")
  if not f then return "" end
  local s = f:read("*a")
  f:close()
  return s
end

local function quote(s)
  return "'" .. s:gsub("'", "'\\''") .. "'"
end

-- Runs `python file >out 2>err` and returns exit code, stdout, stderr. The exit code
-- comes from the shell's `echo $?`: LuaJIT's popen():close() does not report it.
local function run_file(script)
  local out, err = os.tmpname(), os.tmpname()
  local cmd = string.format("%s %s >%s 2>%s </dev/null; echo $?",
    quote(M.python), quote(script), quote(out), quote(err))
  local p = assert(io.popen(cmd, "r"))
  local code = tonumber(p:read("*a"):match("%d+")) or -1
  p:close()
  local stdout, stderr = slurp(out), slurp(err)
  os.remove(out)
  os.remove(err)
  return code, stdout, stderr
end

function M.run(code)
  if type(code) ~= "string" then
    error("bad argument #1 to 'run' (string expected, got " .. type(code) .. ")", 2)
  end
  local script = os.tmpname()
  local f = assert(io.open(script, "wb"))
  f:write(PRELUDE, code, "\n")
  f:close()
  local rc, stdout, stderr = run_file(script)
  os.remove(script)
  if rc ~= 0 then
    local hint = ""
    if stderr:find("No module named 'torch'", 1, true) then
      hint = "\n(PyTorch is missing: run bash scripts/setup.sh, which installs it into .venv)"
    end
    error(string.format("pytorch.run: %s exited with status %d:\n%s%s",
      M.python, rc, stderr, hint), 2)
  end
  local ok, value = pcall(cjson.decode, stdout)
  if not ok then
    error(string.format("pytorch.run: output is not one JSON value (%s):\n%s",
      tostring(value), stdout), 2)
  end
  return value
end

-- The native_functions.yaml that this PyTorch's torchgen ships (the schema of its libtorch), or
-- nil when PyTorch is missing.
local yaml
function M.native_functions_yaml()
  if yaml == nil then
    local p = io.popen(quote(M.python) .. [[ -c 'import os, torchgen; print(os.path.join(os.path.dirname(]] ..
      [[torchgen.__file__), "packaged", "ATen", "native", "native_functions.yaml"))' 2>/dev/null]])
    yaml = (p:read("*a") or ""):match("^(%S+)") or false
    p:close()
  end
  return yaml or nil
end

local available
function M.available()
  if available == nil then
    local script = os.tmpname()
    local f = assert(io.open(script, "wb"))
    f:write("import torch\n")
    f:close()
    available = run_file(script) == 0
    os.remove(script)
  end
  return available
end

return M
