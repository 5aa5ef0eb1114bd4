--[[
  spec/distributed/two_hosts_spec.lua — DDP across two hosts, for real: two network namespaces
  joined by a veth pair, each with its own address, one `tools/run.lua --nnodes 2 --node-rank N
  --master-addr <host 0>` per host, Gloo bound to the veth interface (GLOO_SOCKET_IFNAME).

  Why: a rendezvous or a collective that only ever ran over loopback can hide an address or
  interface bug that shows on the first cluster.

  What: the 2-node job (one rank per node) trains spec/distributed/fixtures/ddp_parity.lua
  (SGD with momentum, plain loss:backward()); both ranks must end identical and equal to one
  process on the whole batches (1e-6), and the veth interface must have carried the traffic
  (its byte counters). The spec makes only namespaces, links and addresses of its own
  (10.231.N.0/24, names ltNNNNN…) and removes them afterwards. It needs root and `ip netns`;
  where the kernel or the sandbox refuses a namespace it is reported as pending with the reason.

  Run: build/ltorch /usr/bin/busted spec/distributed/two_hosts_spec.lua   (~10 s)
]]
local h = dofile("spec/distributed/helpers.lua")

local tag = ("lt%05d"):format(math.random(0, 99999))
local net = ("10.231.%d"):format(math.random(1, 250))
local ns = { tag .. "a", tag .. "b" }
local dev = { tag .. "x", tag .. "y" }

local function sh(cmd)
  local out, rc = h.run(cmd, 30)
  return rc == 0, out
end

local function teardown()
  for _, n in ipairs(ns) do os.execute("ip netns del " .. n .. " 2>/dev/null") end
end

-- Two "hosts": <net>.1 on ns[1], <net>.2 on ns[2]; returns nil, why when it cannot.
local function make_hosts()
  local steps = {
    "ip netns add " .. ns[1], "ip netns add " .. ns[2],
    ("ip link add %s type veth peer name %s"):format(dev[1], dev[2]),
  }
  for i = 1, 2 do
    steps[#steps + 1] = ("ip link set %s netns %s"):format(dev[i], ns[i])
    steps[#steps + 1] = ("ip -n %s addr add %s.%d/24 dev %s"):format(ns[i], net, i, dev[i])
    steps[#steps + 1] = ("ip -n %s link set %s up"):format(ns[i], dev[i])
    steps[#steps + 1] = ("ip -n %s link set lo up"):format(ns[i])
  end
  for _, s in ipairs(steps) do
    local ok, out = sh(s)
    if not ok then teardown(); return nil, s .. ": " .. out end
  end
  return true
end

local function tx_bytes(i)
  local _, out = sh(("ip netns exec %s cat /sys/class/net/%s/statistics/tx_bytes"):format(ns[i], dev[i]))
  return tonumber(out:match("%d+")) or 0
end

describe("DistributedDataParallel across two hosts (network namespaces)", function()
  local ok, why
  if not (io.popen("id -u"):read("*l") == "0") then ok, why = false, "needs root"
  elseif not sh("command -v ip") then ok, why = false, "needs iproute2's ip"
  else ok, why = make_hosts() end
  if not ok then
    pending("two hosts could not be made here: " .. tostring(why))
    return
  end

  it("trains 2 nodes x 1 rank over the veth pair exactly like one process", function()
    local port = h.free_port()
    local function node(i)
      return ("GLOO_SOCKET_IFNAME=%s ip netns exec %s %s tools/run.lua --nnodes 2 --node-rank %d " ..
        "--nproc-per-node 1 --master-addr %s.1 --master-port %d --timeout 90 " ..
        "spec/distributed/fixtures/ddp_parity.lua momentum"):format(dev[i], ns[i], h.BIN, i - 1, net, port)
    end
    local before = tx_bytes(2)
    local out, rc = h.run(node(1) .. " & " .. node(2) .. "; r=$?; wait $!; wait; exit $r", 120)
    local sent = tx_bytes(2) - before
    teardown()
    assert.equal(0, rc, out)
    assert.truthy(out:find("[rank 0] RANKDIFF 0.000e+00", 1, true), out)
    assert.truthy(out:find("[rank 1] RANKDIFF 0.000e+00", 1, true), out)
    local ref = tonumber(out:match("REFDIFF (%S+)"))
    assert.truthy(ref and ref < 1e-6, out)
    assert.is_true(sent > 10000, "host 1 sent only " .. sent .. " bytes over " .. dev[2])
  end)

  it("names the master's address and the rank when the rendezvous times out", function()
    local ok2 = make_hosts()
    assert.truthy(ok2)
    local out = h.run(("ip netns exec %s env RANK=1 WORLD_SIZE=2 MASTER_ADDR=%s.1 MASTER_PORT=%d %s -e " ..
      "'require(\"torch\").distributed.init_process_group{timeout = 2}'"):format(ns[2], net, h.free_port(), h.BIN), 60)
    teardown()
    assert.truthy(out:find(("cannot rendezvous at tcp://%s.1:%%d+ as rank 1 of 2"):format(net:gsub("%.", "%%."))), out)
  end)
end)
