-- spec/doctor/corpus/langid_bigrams.lua — a correct training script (doctor corpus) on real text:
-- language identification of fortune-cookie entries (Debian fortunes, fortunes-de, fortunes-es;
-- scripts/setup.sh installs them): English, German, Spanish, 400 entries each; each entry becomes
-- a bag of hashed character bigrams (256 buckets, L1-normalised, as a people-written baseline
-- does), an MLP, cross_entropy, AdamW, batches of 32.
-- Passes alone when the validation accuracy is above 0.85 (chance: 0.33).
local torch = require "torch"
local nn, F = torch.nn, torch.nn.functional

local ROOT = "/usr/share/games/fortunes/"
local sources = { { "fortunes", "people", "computers" }, { "de/zitate", "de/sprichworte", "de/wusstensie" },
  { "es/refranes.fortunes", "es/proverbios.fortunes", "es/varios.fortunes" } }
local PER = 400

-- the entries of one fortune file: text between lines holding only '%'
local function entries(path, out)
  local f = io.open(path)
  if not f then error(("langid_bigrams: %s missing (Debian packages fortunes, fortunes-de, fortunes-es)"):format(path)) end
  local cur = {}
  for line in f:lines() do
    if line == "%" then
      if #cur > 0 and #out < PER then out[#out + 1] = table.concat(cur, " ") end
      cur = {}
    else cur[#cur + 1] = line end
  end
  f:close()
end

local function bigrams(s)
  local v = {}
  for i = 1, 256 do v[i] = 0 end
  s = s:lower()
  for i = 1, #s - 1 do
    local h = (s:byte(i) * 31 + s:byte(i + 1)) % 256
    v[h + 1] = v[h + 1] + 1
  end
  return v
end

local rows, labels = {}, {}
for lang, files in ipairs(sources) do
  local list = {}
  for _, name in ipairs(files) do
    if #list < PER then entries(ROOT .. name, list) end
  end
  assert(#list == PER, ("langid_bigrams: only %d entries for language %d"):format(#list, lang))
  for _, e in ipairs(list) do rows[#rows + 1] = bigrams(e); labels[#labels + 1] = lang - 1 end
end
torch.manual_seed(31)
local x = torch.tensor(rows)
x = x / x:sum(1, true):clamp_min(1)
local y = torch.tensor(labels, { dtype = torch.int64 })
local perm = torch.randperm(x:size(0))
x, y = x:index_select(0, perm), y:index_select(0, perm)
local ntr = 960
local xtr, ytr, xva, yva = x:narrow(0, 0, ntr), y:narrow(0, 0, ntr), x:narrow(0, ntr, 240), y:narrow(0, ntr, 240)

local model = nn.Sequential(nn.Linear(256, 64), nn.ReLU(), nn.Linear(64, 3))
local opt = torch.optim.AdamW(model:parameters(), { lr = 3e-3, weight_decay = 1e-2 })
for epoch = 1, 15 do
  model:train()
  local p = torch.randperm(ntr)
  for s = 0, ntr - 1, 32 do
    local idx = p:narrow(0, s, 32)
    opt:zero_grad()
    local loss = F.cross_entropy(model(xtr:index_select(0, idx)), ytr:index_select(0, idx))
    loss:backward()
    opt:step()
  end
end
model:eval()
local acc = torch.no_grad(function() return model(xva):argmax(1):eq(yva):float():mean():item() end)
print(("val accuracy %.3f"):format(acc))
assert(acc > 0.85, "langid_bigrams did not train")
