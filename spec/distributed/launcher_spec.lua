-- launcher_spec.lua — tools/run.lua, ltorch's torchrun: environment, prefixed output, and the
-- failure policy (one rank dies -> the others are stopped, non-zero exit, no hang).
--
-- Why: a distributed job whose launcher hangs when a rank crashes burns a whole allocation;
-- torchrun's contract (env vars, exit codes) is what scripts and schedulers rely on.
--
-- What: small rank scripts (written to temp files) print their environment, exit with a code,
-- or spin forever; each run is bounded by `timeout` and the checks time it.
--
-- How: build/ltorch /usr/bin/busted spec/distributed/launcher_spec.lua
local h = dofile("spec/distributed/helpers.lua")

local temps = {}
local function script(src)
  local name = h.tmpname() .. ".lua"
  local f = assert(io.open(name, "w")); f:write(src); f:close()
  temps[#temps + 1] = name
  return name
end

local function run(args, limit)
  return h.run(h.BIN .. " tools/run.lua " .. args, limit or 60)
end

describe("tools/run.lua", function()
  teardown(function() for _, n in ipairs(temps) do os.remove(n) end end)

  it("sets torchrun's environment and prefixes every line with its rank", function()
    local s = script([[
      for _, k in ipairs({"RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "GROUP_RANK",
                          "MASTER_ADDR", "MASTER_PORT"}) do
        io.write(k, "=", os.getenv(k) or "?", " ")
      end
      print("ARGS", ...)
      io.stderr:write("to stderr\n")
      io.write("no newline at the end")
    ]])
    local out, rc = run("--nproc-per-node 2 --nnodes 2 --node-rank 1 --master-port 29123 " .. s .. " a 'b c'")
    assert.equal(0, rc, out)
    assert.truthy(out:find("[rank 2] RANK=2 LOCAL_RANK=0 WORLD_SIZE=4 LOCAL_WORLD_SIZE=2 GROUP_RANK=1 " ..
      "MASTER_ADDR=127.0.0.1 MASTER_PORT=29123 ARGS\ta\tb c", 1, true), out)
    assert.truthy(out:find("[rank 3] RANK=3 LOCAL_RANK=1 WORLD_SIZE=4", 1, true), out)
    assert.truthy(out:find("[rank 3] to stderr", 1, true), out)
    assert.truthy(out:find("[rank 2] no newline at the end", 1, true), out)
  end)

  it("passes --opt=value forms and --no-prefix", function()
    local s = script([[print("R" .. os.getenv("RANK") .. " " .. os.getenv("MASTER_ADDR"))]])
    local out, rc = run("--nproc_per_node=3 --master-addr=localhost --no-prefix " .. s)
    assert.equal(0, rc, out)
    for r = 0, 2 do assert.truthy(out:find("\nR" .. r .. " localhost", 1, true) or out:find("^R" .. r .. " localhost"), out) end
    assert.falsy(out:find("[rank", 1, true), out)
  end)

  it("stops the other ranks and exits with the failed rank's code", function()
    local s = script([[
      if os.getenv("RANK") == "1" then
        os.execute("sleep 0.5"); print("rank 1 dying"); os.exit(7)
      end
      print("spinning"); io.stdout:flush()
      os.execute("sleep 300")        -- a child process of the rank: stopped with it
      while true do end              -- and a rank that ignores nothing but spins forever
    ]])
    local out, rc, secs = run("--nproc-per-node 3 --kill-timeout 3 " .. s, 60)
    assert.equal(7, rc, out)
    assert.truthy(out:find("rank 1 failed (exit code 7); stopping the other ranks", 1, true), out)
    assert.is_true(secs < 20, "took " .. secs .. "s")
  end)

  it("escalates to SIGKILL for a rank that ignores SIGTERM, within --kill-timeout", function()
    local s = script([[
      if os.getenv("RANK") == "0" then os.execute("sleep 0.3"); error("boom") end
      os.execute("trap '' TERM; sleep 300")   -- a shell that ignores SIGTERM
    ]])
    local out, rc, secs = run("--nproc-per-node 2 --kill-timeout 2 " .. s, 60)
    assert.equal(1, rc, out)
    assert.truthy(out:find("[rank 0] ltorch: ", 1, true), out)
    assert.truthy(out:find("boom", 1, true), out)
    assert.is_true(secs < 20, "took " .. secs .. "s")
  end)

  it("reports a rank killed by a signal as 128 + signal", function()
    local s = script([[
      if os.getenv("RANK") == "1" then os.execute("kill -9 $PPID") end
      os.execute("sleep 300")
    ]])
    local out, rc, secs = run("--nproc-per-node 2 --kill-timeout 2 " .. s, 60)
    assert.equal(137, rc, out)
    assert.truthy(out:find("rank 1 failed (signal 9)", 1, true), out)
    assert.is_true(secs < 20)
  end)

  it("bounds the whole run with --timeout (exit 124)", function()
    local s = script([[os.execute("sleep 300")]])
    local out, rc, secs = run("--nproc-per-node 2 --timeout 2 --kill-timeout 2 " .. s, 60)
    assert.equal(124, rc, out)
    assert.truthy(out:find("--timeout 2s reached", 1, true), out)
    assert.is_true(secs < 20)
  end)

  it("stops every rank when the launcher itself gets SIGTERM", function()
    local marker = ("%.4f"):format(300 + math.random())       -- a unique `sleep` to look for
    local s = script(('print("up"); io.stdout:flush(); os.execute("sleep %s")'):format(marker))
    local out, rc, secs = h.run(("timeout -s TERM 4 %s tools/run.lua --nproc-per-node 2 --kill-timeout 2 %s")
      :format(h.BIN, s), 60)
    assert.equal(124, rc, out)                                 -- timeout's code: it had to signal
    assert.truthy(out:find("got signal 15; stopping all ranks", 1, true), out)
    assert.is_true(secs < 15)
    os.execute("sleep 0.5")
    local left = io.popen("pgrep -f '[s]leep " .. marker .. "' || true"):read("*a")
    assert.equal("", left, "ranks left behind: " .. left)
  end)

  it("stops the survivors of a distributed job when one rank is killed mid-training", function()
    local s = script([[
      local torch = require "torch"
      local dist = torch.distributed
      dist.init_process_group{ timeout = 600 }      -- collectives alone would wait 10 minutes
      local t = torch.ones(1000)
      for i = 1, 1e9 do
        dist.all_reduce(t); t:fill_(1)
        if i == 20 and dist.get_rank() == 1 then os.execute("kill -9 $PPID") end
      end
    ]])
    local out, rc, secs = run("--nproc-per-node 3 --master-port 0 --kill-timeout 3 " .. s, 120)
    assert.are_not.equal(0, rc, out)
    assert.truthy(out:find("rank 1 failed (signal 9)", 1, true), out)
    assert.is_true(secs < 40, "took " .. secs .. "s")
  end)

  it("rejects bad usage", function()
    local out, rc = run("--nproc-per-node 2")
    assert.equal(2, rc); assert.truthy(out:find("no script given", 1, true), out)
    out, rc = run("--bogus 1 x.lua")
    assert.equal(2, rc); assert.truthy(out:find("unknown option --bogus", 1, true), out)
    out, rc = run("--nnodes 2 --node-rank 2 x.lua")
    assert.equal(2, rc); assert.truthy(out:find("node-rank", 1, true), out)
    out, rc = run("--nproc-per-node 1 /nonexistent/prog")
    assert.are_not.equal(0, rc)
    assert.truthy(out:find("cannot start rank 0 (/nonexistent/prog): No such file or directory", 1, true), out)
    assert.falsy(out:find("traceback", 1, true), out)
  end)
end)
