-- spec/doctor/corpus/tiny_language_model.lua — a correct training script (doctor corpus): a
-- character-level language model of the makemore/Bengio kind: the previous 4 characters of a
-- small text, embedded and concatenated, an MLP, the next character's logits; CrossEntropyLoss,
-- AdamW.
-- Passes alone when the validation loss is below 0.7 of log(vocabulary) (the uniform guess).
local torch = require "torch"
local nn = torch.nn

torch.manual_seed(91)
local text = ("the cat sat on the mat. the dog sat on the log. a cat and a dog met on a mat. "):rep(12)
local vocab, ids = {}, {}
for ch in text:gmatch(".") do if not vocab[ch] then vocab[#vocab + 1] = ch; vocab[ch] = #vocab - 1 end end
for ch in text:gmatch(".") do ids[#ids + 1] = vocab[ch] end
local V, K = #vocab, 4
local rows, nxt = {}, {}
for i = 1, #ids - K do
  local r = {}
  for j = 0, K - 1 do r[j + 1] = ids[i + j] end
  rows[#rows + 1], nxt[#nxt + 1] = r, ids[i + K]
end
local x, y = torch.tensor(rows, { dtype = torch.int64 }), torch.tensor(nxt, { dtype = torch.int64 })
local perm = torch.randperm(x:size(0))
x, y = x:index_select(0, perm), y:index_select(0, perm)
local n = math.floor(0.8 * x:size(0))
local tx, ty, vx, vy = x:narrow(0, 0, n), y:narrow(0, 0, n), x:narrow(0, n, x:size(0) - n), y:narrow(0, n, x:size(0) - n)

local LM = nn.Module:extend("TinyLM")
function LM:__init()
  self.emb = nn.Embedding(V, 10)
  self.mlp = nn.Sequential(nn.Linear(K * 10, 64), nn.Tanh(), nn.Linear(64, V))
end
function LM:forward(ctx) return self.mlp(self.emb(ctx):flatten(1)) end
local model = LM()
local loss_fn = nn.CrossEntropyLoss()
local opt = torch.optim.AdamW(model:parameters(), { lr = 3e-3 })
for epoch = 1, 15 do
  model:train()
  local p = torch.randperm(n)
  for s = 0, n - 1, 64 do
    local idx = p:narrow(0, s, math.min(64, n - s))
    opt:zero_grad()
    local loss = loss_fn(model(tx:index_select(0, idx)), ty:index_select(0, idx))
    loss:backward()
    opt:step()
  end
end
model:eval()
local vl = torch.no_grad(function() return loss_fn(model(vx), vy):item() end)
print(("val loss %.3f (uniform: %.3f)"):format(vl, math.log(V)))
assert(vl < 0.7 * math.log(V), "tiny_language_model did not train")
