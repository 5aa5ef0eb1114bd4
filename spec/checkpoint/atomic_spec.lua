-- spec/checkpoint/atomic_spec.lua — saves are atomic: a process SIGKILLed at a random moment
-- while it rewrites a checkpoint in a loop never leaves an unreadable or mixed file behind;
-- the checkpoint always loads and is one complete generation (its tensor all equals its
-- generation counter). Both formats. The killed saves' temporary files do not pile up: each
-- save removes those of writers that are gone (bindings/lt_serialize.cpp lt_file_temp), and
-- never a live writer's.
local torch = require "torch"

local dir = os.tmpname() .. ".d"
local ltorch = arg and arg[-1] or "build/ltorch"

local CHILD = [[
local torch = require "torch"
local path = arg[1]
local gen = torch.load(path).gen
io.open(path .. ".ready", "w"):close()   -- loaded: the parent times its kill from here
while true do
  gen = gen + 1
  torch.save({ gen = gen, w = torch.full({ 512, 1024 }, gen) }, path)   -- 4 MB per save
end
]]

-- The temporary files beside path ("<name>.tmp.*").
local function temps(path)
  local name = path:match("[^/]+$")
  local list = {}
  local p = assert(io.popen("ls -a " .. dir))
  for entry in p:lines() do
    if entry:sub(1, #name + 5) == name .. ".tmp." then list[#list + 1] = entry end
  end
  p:close()
  return list
end

local function sh_line(cmd)
  local p = assert(io.popen(cmd))
  local line = p:read("*l")
  p:close()
  return line
end

local function check_file(path)
  local ok, v = pcall(torch.load, path)
  assert.is_true(ok, tostring(v))
  assert.is_true(v.w:eq(v.gen):all():item(), "tensor does not match generation " .. tostring(v.gen))
  return v.gen
end

describe("atomic checkpoint writes", function()
  setup(function()
    os.execute("mkdir -p " .. dir)
    local f = assert(io.open(dir .. "/child.lua", "w"))
    f:write(CHILD)
    f:close()
  end)
  teardown(function() os.execute("rm -rf " .. dir) end)

  for _, ext in ipairs({ ".pt", ".safetensors" }) do
    it("survives SIGKILL mid-save many times (" .. ext .. ")", function()
      local path = dir .. "/ckpt" .. ext
      torch.save({ gen = 0, w = torch.full({ 512, 1024 }, 0) }, path)
      local last, advanced = 0, 0
      math.randomseed(42)
      for i = 1, 10 do
        -- The kill comes 0.05-0.6 s after the child has loaded the checkpoint (start-up time on a
        -- loaded machine varies too much to time it from the spawn): a save takes ~20 ms.
        local delay = 0.05 + math.random() * 0.55
        os.remove(path .. ".ready")
        os.execute(("%s %s/child.lua %s >/dev/null 2>&1 & pid=$!; "
          .. "for _ in $(seq 600); do [ -e %s.ready ] && break; sleep 0.05; done; sleep %.2f; kill -9 $pid; wait $pid 2>/dev/null")
          :format(ltorch, dir, path, path, delay))
        local gen = check_file(path)
        assert.is_true(gen >= last, "went backwards at kill " .. i)
        if gen > last then advanced = advanced + 1 end
        last = gen
      end
      assert.is_true(advanced >= 3, "the child rarely got to save; kills did not hit saves")
      -- each child's first save removed the temporary files of the children killed before it
      assert.is_true(#temps(path) <= 1, "left behind: " .. table.concat(temps(path), " "))
      torch.save({ gen = last + 1, w = torch.full({ 4 }, last + 1) }, path)
      assert.are.same({}, temps(path))
      os.remove(path .. ".ready")
    end)
  end

  it("removes only the temporary files of writers that are gone", function()
    local path = dir .. "/mine.pt"
    local host = sh_line("cat /proc/sys/kernel/hostname")
    local dead = sh_line("sh -c 'echo $$'")                 -- a process that has exited
    local live = sh_line("sleep 60 >/dev/null 2>&1 & echo $!")
    finally(function() os.execute("kill " .. live .. " 2>/dev/null") end)
    local function touch(name) io.open(dir .. "/" .. name, "w"):close() end
    touch(("mine.pt.tmp.%s.%s.aB3xYz"):format(host, dead))
    touch(("mine.pt.tmp.%s.%s.Qw9eRt"):format(host, live))
    touch(("mine.pt.tmp.other-host-%s.%s.Zx7cVb"):format(host, dead))  -- another machine's writer
    touch("mine.pt.tmp.Lm4nOp")                                        -- an older ltorch's: unknown writer
    torch.save({ 1, 2 }, path)
    local left, want = temps(path), {
      "mine.pt.tmp.Lm4nOp",
      ("mine.pt.tmp.other-host-%s.%s.Zx7cVb"):format(host, dead),
      ("mine.pt.tmp.%s.%s.Qw9eRt"):format(host, live),
    }
    table.sort(left)
    table.sort(want)
    assert.are.same(want, left)
    assert.are.same({ 1, 2 }, torch.load(path))
  end)
end)
