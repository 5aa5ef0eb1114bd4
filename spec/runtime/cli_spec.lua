-- cli_spec.lua — the `ltorch` executable behaves like the `lua`/`luajit` command line.
--
-- Why: busted, scripts and users drive ltorch through its command line; options, the
-- `arg` table, exit codes, module paths, Ctrl-C and the REPL must hold their contract.
--
-- What: each test runs the binary in a child shell (io.popen) with a clean environment
-- (LTORCH_PATH, LUA_PATH, LUA_CPATH, LUA_INIT unset unless the test sets them) and
-- checks stdout, stderr and the exit status.
--
-- How (from the repo root; busted itself runs under ltorch):
--     build/ltorch /usr/bin/busted spec/runtime
-- The binary is $LTORCH_BIN, default build/ltorch relative to the current directory.

local BIN = os.getenv("LTORCH_BIN") or "build/ltorch"
local CLEAN_ENV = "env -u LTORCH_PATH -u LUA_PATH -u LUA_CPATH -u LUA_INIT"

local temps = {}

local function q(s)
  return "'" .. tostring(s):gsub("'", [['\'']]) .. "'"
end

local function tmpfile(content)
  local name = os.tmpname()
  local f = assert(io.open(name, "w"))
  f:write(content or "")
  f:close()
  temps[#temps + 1] = name
  return name
end

local function tmpdir()
  local name = os.tmpname()
  os.remove(name)
  assert(os.execute("mkdir -p " .. q(name)) == 0)
  temps[#temps + 1] = name
  return name
end

local function write(path, content)
  local f = assert(io.open(path, "w"))
  f:write(content)
  f:close()
end

-- Runs a shell command line; returns stdout, stderr and the exit status.
local function sh(cmdline)
  local errname = os.tmpname()
  local p = assert(io.popen("(" .. cmdline .. ") 2>" .. q(errname) .. "; echo \"__rc=$?\""))
  local out = p:read("*a")
  p:close()
  local f = assert(io.open(errname))
  local err = f:read("*a")
  f:close()
  os.remove(errname)
  local rc = tonumber(out:match("__rc=(%d+)\n?$"))
  return (out:gsub("__rc=%d+\n?$", "")), err, rc
end

-- Runs ltorch with `args` (already shell-quoted). opts.env: "NAME=value ..." added to
-- the clean environment; opts.stdin: text piped to stdin (else stdin is /dev/null).
local function ltorch(args, opts)
  opts = opts or {}
  local cmd = CLEAN_ENV .. " " .. (opts.env or "") .. " " .. q(BIN) .. " " .. args
  if opts.stdin then
    cmd = "cat " .. q(tmpfile(opts.stdin)) .. " | " .. cmd
  else
    cmd = cmd .. " </dev/null"
  end
  return sh(cmd)
end

-- Runs `code` as a script (after a first line that writes a marker file) in the
-- background; once it runs, sends SIGINT (twice when `twice`). Returns stdout, stderr
-- and the exit status (130: killed by SIGINT). A watchdog kills the child after 20 s
-- so a missed signal cannot hang the suite.
local function interrupted_run(code, twice)
  local marker = os.tmpname()
  os.remove(marker)
  temps[#temps + 1] = marker
  local script = tmpfile(("local f = io.open(%q, 'w') f:write('ready') f:close()\n")
    :format(marker) .. code)
  return sh(table.concat({
    CLEAN_ENV .. " " .. q(BIN) .. " " .. q(script) .. " </dev/null & p=$!",
    "(sleep 20; kill -KILL $p) >/dev/null 2>&1 & w=$!",
    "i=0; while [ ! -s " .. q(marker) .. " ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done",
    "sleep 0.3; kill -INT $p",
    twice and "sleep 0.5; kill -INT $p" or ":",
    "wait $p; rc=$?",
    "kill $w 2>/dev/null",
    "exit $rc",
  }, "\n"))
end

-- Physical absolute path of a directory.
local function realdir(path)
  local out = sh("cd " .. q(path) .. " && pwd -P")
  return (out:gsub("\n$", ""))
end

teardown(function()
  for _, name in ipairs(temps) do
    os.execute("rm -rf " .. q(name))
  end
end)

describe("ltorch command line", function()
  it("prints the version line with -v", function()
    local out, _, rc = ltorch("-v")
    assert.are.equal(0, rc)
    assert.truthy(out:match("^ltorch 0%.1%.0 %(LuaJIT 2%.1[^)]*%)\n$"), out)
  end)

  it("runs -e chunks in order", function()
    local out, err, rc = ltorch("-e 'x = 20' -e 'print(x + 1, _LTORCH.version)'")
    assert.are.equal(0, rc, err)
    assert.are.equal("21\t0.1.0\n", out)
  end)

  it("accepts -e with its chunk attached", function()
    local out, _, rc = ltorch("'-eprint(7)'")
    assert.are.equal(0, rc)
    assert.are.equal("7\n", out)
  end)

  it("requires -l modules into globals, also as -l g=mod", function()
    local dir = tmpdir()
    write(dir .. "/mymod.lua", "return { answer = 42 }\n")
    local env = "LTORCH_PATH=" .. q(dir)
    local out, err, rc = ltorch("-l mymod -l m=mymod -e 'print(mymod.answer, m.answer)'", { env = env })
    assert.are.equal(0, rc, err)
    assert.are.equal("42\t42\n", out)
  end)

  it("fails with exit 1 when -l cannot find the module", function()
    local out, err, rc = ltorch("-l no_such_module_xyz -e 'print(1)'")
    assert.are.equal(1, rc)
    assert.are.equal("", out)
    assert.truthy(err:find("ltorch: module 'no_such_module_xyz' not found", 1, true), err)
  end)

  it("builds arg like lua.c and passes script arguments as ...", function()
    local script = tmpfile([[
for i = -2, 3 do io.write(i, "=", tostring(arg[i]), "\n") end
print("n", select("#", ...), ...)
]])
    local out, err, rc = ltorch("-E " .. q(script) .. " a 'b c'")
    assert.are.equal(0, rc, err)
    assert.are.equal(table.concat({
      "-2=" .. BIN, "-1=-E", "0=" .. script, "1=a", "2=b c", "3=nil",
      "n\t2\ta\tb c", "",
    }, "\n"), out)
  end)

  it("runs stdin as the script with -", function()
    local out, err, rc = ltorch("- x y", { stdin = "print(arg[0], ...)\n" })
    assert.are.equal(0, rc, err)
    assert.are.equal("-\tx\ty\n", out)
  end)

  it("runs piped stdin when given no arguments", function()
    local out, err, rc = ltorch("", { stdin = "print('from pipe', 6 * 7)\n" })
    assert.are.equal(0, rc, err)
    assert.are.equal("from pipe\t42\n", out)
  end)

  it("treats arguments after -- as the script", function()
    local script = tmpfile("print('after dashes', ...)\n")
    local out, err, rc = ltorch("-- " .. q(script) .. " -v")
    assert.are.equal(0, rc, err)
    assert.are.equal("after dashes\t-v\n", out)
  end)

  it("skips a shebang line", function()
    local script = tmpfile("#!/usr/bin/env ltorch\nprint('shebang ok')\n")
    local out, err, rc = ltorch(q(script))
    assert.are.equal(0, rc, err)
    assert.are.equal("shebang ok\n", out)
  end)

  it("exits 1 with 'ltorch:' and a traceback when a script errors", function()
    local script = tmpfile("local function inner() error('boom') end\ninner()\n")
    local out, err, rc = ltorch(q(script))
    assert.are.equal(1, rc)
    assert.are.equal("", out)
    assert.truthy(err:find("^ltorch: [^\n]*:1: boom\nstack traceback:\n"), err)
    assert.truthy(err:find("in function 'inner'", 1, true), err)
  end)

  it("reports non-string error objects", function()
    local _, err, rc = ltorch("-e 'error({})'")
    assert.are.equal(1, rc)
    assert.truthy(err:find("ltorch: (error object is a table value)", 1, true), err)
  end)

  it("stops at the first failing -e", function()
    local out, _, rc = ltorch("-e 'error(\"first\")' -e 'print(\"second\")'")
    assert.are.equal(1, rc)
    assert.are.equal("", out)
  end)

  it("passes os.exit codes through", function()
    local _, _, rc3 = ltorch("-e 'os.exit(3)'")
    assert.are.equal(3, rc3)
    local _, _, rc0 = ltorch("-e 'os.exit(true)'")
    assert.are.equal(0, rc0)
  end)

  it("reports a missing script file clearly", function()
    local out, err, rc = ltorch("/nonexistent/missing_script.lua")
    assert.are.equal(1, rc)
    assert.are.equal("", out)
    assert.truthy(err:find("ltorch: cannot open /nonexistent/missing_script.lua", 1, true), err)
    assert.truthy(err:find("No such file or directory", 1, true), err)
  end)

  it("rejects a bad option with usage and exit 1", function()
    local out, err, rc = ltorch("-x")
    assert.are.equal(1, rc)
    assert.are.equal("", out)
    assert.truthy(err:find("ltorch: unrecognized option '-x'", 1, true), err)
    assert.truthy(err:find("usage: ltorch [options] [script [args]]", 1, true), err)
  end)

  it("rejects -e without its argument", function()
    local _, err, rc = ltorch("-e")
    assert.are.equal(1, rc)
    assert.truthy(err:find("'-e' needs argument", 1, true), err)
  end)
end)

describe("ltorch module paths", function()
  it("puts $LTORCH_PATH first on package.path and in _LTORCH.lua_dir", function()
    local dir = tmpdir()
    os.execute("mkdir -p " .. q(dir .. "/pkg"))
    write(dir .. "/pkg/init.lua", "return 'pkg init'\n")
    local out, err, rc = ltorch(
      "-e 'print(_LTORCH.lua_dir) print(package.path) print(require(\"pkg\"))'",
      { env = "LTORCH_PATH=" .. q(dir) })
    assert.are.equal(0, rc, err)
    local lua_dir, path, loaded = out:match("^([^\n]*)\n([^\n]*)\n([^\n]*)\n$")
    local real = realdir(dir)
    assert.are.equal(real, lua_dir)
    local prefix = real .. "/?.lua;" .. real .. "/?/init.lua;"
    assert.are.equal(prefix, path:sub(1, #prefix))
    assert.truthy(path:find("/usr/share/lua/5.1/?.lua", 1, true), path)
    assert.are.equal("pkg init", loaded)
  end)

  it("falls back to <exe_dir>/../lua and exposes the executable", function()
    local out, err, rc = ltorch("-e 'print(_LTORCH.exe) print(_LTORCH.lua_dir)'",
      { env = "LTORCH_PATH=/nonexistent/dir" })
    assert.are.equal(0, rc, err)
    local exe, lua_dir = out:match("^([^\n]*)\n([^\n]*)\n$")
    local bin_dir, bin_name = BIN:match("^(.*)/([^/]*)$")
    assert.are.equal(realdir(bin_dir or ".") .. "/" .. (bin_name or BIN), exe)
    local build_tree = exe:match("^(.*)/[^/]*$") .. "/../lua"
    local _, _, isdir = sh("test -d " .. q(build_tree))
    assert.are.equal(0, isdir, "precondition: " .. build_tree .. " exists")
    assert.are.equal(realdir(build_tree), lua_dir)
  end)

  it("finds the configured source tree's lua/ from a build directory anywhere", function()
    -- A copy of the binary where <exe_dir>/../lua does not exist stands for `cmake -B /any/dir`.
    local dir = os.tmpname()
    os.remove(dir)
    assert.are.equal(0, select(3, sh("mkdir -p " .. q(dir .. "/bin") .. " && cp " .. q(BIN) .. " " .. q(dir .. "/bin/"))))
    local out, err, rc = sh(CLEAN_ENV .. " " .. q(dir .. "/bin/ltorch") ..
      " -e 'print(_LTORCH.lua_dir) print(require(\"torch\").ones(2):sum():item())'")
    sh("rm -rf " .. q(dir))
    assert.are.equal(0, rc, err)
    assert.are.equal(realdir("lua") .. "\n2\n", out)
  end)

  it("honours LUA_PATH and LUA_CPATH, with ;; as the defaults", function()
    local out, err, rc = ltorch("-e 'print(package.path) print(package.cpath)'",
      { env = "LUA_PATH='/xlp/?.lua;;' LUA_CPATH='/xlc/?.so'" })
    assert.are.equal(0, rc, err)
    local path, cpath = out:match("^([^\n]*)\n([^\n]*)\n$")
    assert.truthy(path:find(";/xlp/?.lua;", 1, true), path)
    assert.truthy(path:find("/usr/share/lua/5.1/?.lua", 1, true), path)
    assert.are.equal("/xlc/?.so", cpath)
  end)

  it("ignores LUA_PATH, LUA_CPATH and LTORCH_PATH with -E", function()
    local dir = tmpdir()
    local out, err, rc = ltorch("-E -e 'print(package.path) print(package.cpath) print(_LTORCH.lua_dir)'",
      { env = "LTORCH_PATH=" .. q(dir) .. " LUA_PATH='/xlp/?.lua' LUA_CPATH='/xlc/?.so'" })
    assert.are.equal(0, rc, err)
    local path, cpath, lua_dir = out:match("^([^\n]*)\n([^\n]*)\n([^\n]*)\n$")
    assert.falsy(path:find("/xlp/", 1, true), path)
    assert.falsy(cpath:find("/xlc/", 1, true), cpath)
    assert.are_not.equal(realdir(dir), lua_dir)
  end)

  it("loads busted and its C modules (the executable exports the Lua API)", function()
    local busted = sh("command -v busted"):gsub("\n$", "")
    assert.are_not.equal("", busted)
    local out, err, rc = ltorch(q(busted) .. " --version")
    assert.are.equal(0, rc, err)
    assert.truthy(out:match("^%d+%.%d+"), out)
    local out2, err2, rc2 = ltorch("-e 'print(type(require(\"lfs\").currentdir))'")
    assert.are.equal(0, rc2, err2)
    assert.are.equal("function\n", out2)
  end)
end)

describe("ltorch Ctrl-C", function()
  it("interrupts a running script with 'interrupted!' and exit 1", function()
    local out, err, rc = interrupted_run("while true do os.clock() end\n")
    assert.are.equal(1, rc, err)
    assert.are.equal("", out)
    assert.truthy(err:find("ltorch: [^\n]*:2: interrupted!\nstack traceback:"), err)
  end)

  it("interrupts a script that signals itself", function()
    local out, err, rc = ltorch([[-e 'io.popen("kill -INT $PPID"):close() for i = 1, 10 do end print("missed")']])
    assert.are.equal(1, rc)
    assert.are.equal("", out)
    assert.truthy(err:find("interrupted!", 1, true), err)
  end)

  it("lets a JIT-compiled loop poll _LTORCH.interrupt_pending through the FFI", function()
    local out, err, rc = interrupted_run([[
local ffi = require("ffi")
local pending = ffi.cast("int (**)(void)", _LTORCH.interrupt_pending)[0]
local x = 0
while true do
  x = x + 1
  if pending() ~= 0 then _LTORCH.check_interrupt() end
end
]])
    assert.are.equal(1, rc, err)
    assert.are.equal("", out)
    assert.truthy(err:find(":7: interrupted!", 1, true), err) -- line 1 is the marker
  end)

  it("stops a JIT-compiled loop of tensor ops (the op raises it: traces run no hooks)", function()
    local out, err, rc = interrupted_run([[
local torch = require "torch"
local x = torch.ones(10)
while true do x:add_(1) end
]])
    assert.are.equal(1, rc, err)
    assert.are.equal("", out)
    assert.truthy(err:find(":4: add_: interrupted!\nstack traceback:", 1, true), err)
  end)

  it("raises an interrupt a tensor op took once: caught, the script goes on", function()
    local out, err, rc = interrupted_run([[
local torch = require "torch"
local x = torch.ones(10)
local ok, e = pcall(function() while true do x:add_(1) end end)
for _ = 1, 1000 do x:add_(1) end
print("caught", ok, e)
]])
    assert.are.equal(0, rc, err)
    assert.truthy(out:find("^caught\tfalse\t[^\n]*:4: add_: interrupted!\n$"), out .. err)
  end)

  it("falls back to the default action on a second Ctrl-C", function()
    -- The loop runs inside one JIT trace, where LuaJIT runs no hooks (see interrupt.c).
    local _, _, rc = interrupted_run("local x = 0 while true do x = x + 1 end\n", true)
    assert.are.equal(130, rc)
  end)

  it("can be interrupted again after a caught interrupt", function()
    local script = [[
local ok, e = pcall(function() while true do os.clock() end end)
io.stderr:write("caught: ", tostring(e), "\n")
io.popen("kill -INT $PPID"):close()
for i = 1, 10 do end
print("missed")
]]
    local out, err, rc = interrupted_run(script)
    assert.are.equal(1, rc, err)
    assert.are.equal("", out)
    assert.truthy(err:find("caught: [^\n]*interrupted!\n"), err)
    assert.truthy(err:find("ltorch: [^\n]*interrupted!\nstack traceback:"), err)
  end)
end)

describe("ltorch REPL", function()
  local session = table.concat({
    "x = 20 + 1",
    "x",
    "error('oops')",
    "x * 2",
    "function f(a)",
    "  return a + 21",
    "end",
    "f(21)",
    "=x",
    "1, nil, 'three'",
    "",
  }, "\n")

  it("prints values, survives errors and continues multi-line input", function()
    local out, err, rc = ltorch("-i", { stdin = session })
    assert.are.equal(0, rc, err)
    local version, rest = out:match("^(ltorch [^\n]*)\n(.*)$")
    assert.truthy(version, out)
    assert.are.equal("21\n42\n42\n21\n1\tnil\tthree\n", rest)
    assert.truthy(err:find("ltorch: stdin:1: oops\nstack traceback:", 1, true), err)
  end)

  it("starts after the script with -i", function()
    local script = tmpfile("greeting = 'hi from script'\n")
    local out, err, rc = ltorch("-i " .. q(script), { stdin = "greeting\n" })
    assert.are.equal(0, rc, err)
    assert.truthy(out:find("\nhi from script\n", 1, true), out)
  end)
end)
