-- spec/checkpoint/training_state_spec.lua — torch.training_state: resuming from a training-state
-- checkpoint reproduces the uninterrupted run bit for bit (MLP + SGD with momentum, randperm
-- shuffling and dropout masks drawn from the CPU generator); Manager retention.
local torch = require "torch"
local ckpt = torch.training_state

local dir = os.tmpname() .. ".d"
os.execute("mkdir -p " .. dir)

local X, Y
local function data()
  if not X then
    torch.manual_seed(123)
    X, Y = torch.randn(64, 6), torch.randint(3, { 64 })
  end
  return X, Y
end

local layers = setmetatable({}, { __mode = "k" })

local function build(seed)
  torch.manual_seed(seed)
  local nn = torch.nn
  local l1, l2 = nn.Linear(6, 16), nn.Linear(16, 3)
  local net = nn.Sequential(l1, nn.ReLU(), l2)
  layers[net] = { l1, l2 }
  return net, torch.optim.SGD(net:parameters(), { lr = 0.1, momentum = 0.9 })
end

local function epoch(net, opt)
  local x, y = data()
  local perm = torch.randperm(64)
  for b = 0, 3 do
    local idx = perm:narrow(0, b * 16, 16)
    local l1, l2 = layers[net][1], layers[net][2]
    local h = l1(x:index_select(0, idx)):relu()
    h = h * torch.rand(h:size()):ge(0.3) / 0.7           -- dropout, p = 0.3
    local loss = torch.nn.functional.cross_entropy(l2(h), y:index_select(0, idx))
    opt:zero_grad()
    loss:backward()
    opt:step()
  end
end

describe("training-state checkpoints", function()
  teardown(function() os.execute("rm -rf " .. dir) end)

  it("resume matches the uninterrupted run bitwise", function()
    data()
    local net, opt = build(7)
    torch.manual_seed(99)
    for _ = 1, 6 do epoch(net, opt) end
    local want = net:state_dict()

    local net2, opt2 = build(7)
    torch.manual_seed(99)
    for _ = 1, 3 do epoch(net2, opt2) end
    local path = dir .. "/state.pt"
    ckpt.save_training_state(path, { model = net2, optimizer = opt2, epoch = 3, step = 12,
      best_metric = 0.5, config = { lr = 0.1, layers = { 6, 16, 3 } } })

    local net3, opt3 = build(1234)                      -- different init, different RNG
    torch.manual_seed(5)
    local st = ckpt.load_training_state(path, { model = net3, optimizer = opt3 })
    assert.equal(3, st.epoch)
    assert.equal(12, st.step)
    assert.same({ lr = 0.1, layers = { 6, 16, 3 } }, st.config)
    for _ = st.epoch + 1, 6 do epoch(net3, opt3) end
    for k, v in pairs(want) do assert.is_true(torch.equal(v, net3:state_dict()[k]), k) end
  end)

  it("refuses unknown parts and non-checkpoints clearly", function()
    assert.has_error(function() ckpt.save_training_state(dir .. "/x.pt", { modle = {} }) end)
    torch.save({ a = 1 }, dir .. "/plain.pt")
    local ok, err = pcall(ckpt.load_training_state, dir .. "/plain.pt", {})
    assert.is_false(ok)
    assert.matches("not a training%-state checkpoint", err)
  end)

  it("Manager keeps the last N plus the best by metric", function()
    local net, opt = build(3)
    local mdir = dir .. "/runs"
    local mgr = ckpt.Manager(mdir, { keep_last = 2, best_metric = "val_loss", mode = "min" })
    local losses = { 0.9, 0.2, 0.5, 0.7, 0.6 }
    for step, l in ipairs(losses) do mgr:save(step, { model = net, optimizer = opt, epoch = step }, { val_loss = l }) end
    local files = mgr:checkpoints()
    assert.same({ mdir .. "/checkpoint-00000002.pt", mdir .. "/checkpoint-00000004.pt", mdir .. "/checkpoint-00000005.pt" }, files)
    assert.equal(mdir .. "/checkpoint-00000002.pt", mgr:best())
    assert.is_nil(io.open(mdir .. "/checkpoint-00000001.pt"))
    assert.is_nil(io.open(mdir .. "/checkpoint-00000003.pt"))
    local again = ckpt.Manager(mdir, { keep_last = 2, best_metric = "val_loss", mode = "min" })
    assert.equal(mdir .. "/checkpoint-00000005.pt", again:latest())
    local st = again:load_latest({ model = net, optimizer = opt })
    assert.equal(5, st.epoch)
    assert.equal(0.2, again:load_best({}).best_metric)
  end)

  it("the old name torch.checkpoint says what to write, at the caller's line", function()
    local line = debug.getinfo(1, "l").currentline + 1
    local ok, err = pcall(function() return torch.checkpoint end)
    assert.is_false(ok)
    assert.truthy(err:find("training_state_spec.lua:" .. line .. ": torch.checkpoint is now torch.training_state", 1, true), err)
    assert.truthy(err:find("torch.utils.checkpoint", 1, true), err)
    assert.is_nil(rawget(torch, "checkpoint"))
  end)
end)
