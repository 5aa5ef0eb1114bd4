-- spec/data/datasets_spec.lua — built-in datasets over real files, transforms, the tokenizer,
-- and errors for corrupt inputs naming the file and position: a truncated IDX file, a bad CSV
-- row (file:line), an undecodable image (its path).
-- Needs scripts/fetch_datasets.sh (fortunes, sklearn tables) and Fashion-MNIST.
-- Run: build/ltorch /usr/bin/busted spec/data/datasets_spec.lua

local torch = require "torch"
local data = torch.utils.data
local T = data.transforms
local D = data.datasets

local function tmpdir()
  local d = os.tmpname()
  os.remove(d)
  os.execute("mkdir -p " .. d)
  return d
end

local function write(path, s)
  local f = assert(io.open(path, "wb")); f:write(s); f:close()
end

describe("corrupt files", function()
  it("a truncated IDX file names the file and the missing bytes", function()
    local d = tmpdir()
    local src = assert(io.open("/usr/share/datasets/fashion-mnist/t10k-labels-idx1-ubyte.gz", "rb"))
    local gz = src:read("*a"); src:close()
    os.execute("mkdir -p " .. d .. "/fm")
    write(d .. "/fm/t10k-labels-idx1-ubyte.gz", gz)
    os.execute(("gzip -dc /usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz | head -c 5000 > %s/fm/t10k-images-idx3-ubyte.gz"):format(d))
    local ok, err = pcall(D.FashionMNIST, "test", { root = d .. "/fm" })
    assert.is_false(ok)
    assert.matches("t10k%-images%-idx3%-ubyte.gz: truncated payload: expected 7840000 bytes", err)
  end)

  it("a bad CSV row is reported as file:line", function()
    local d = tmpdir()
    write(d .. "/t.csv", "a,b,label\n1,2,x\n3,4,y\n5,6\n")
    local ok, err = pcall(D.CSVDataset, d .. "/t.csv")
    assert.is_false(ok)
    assert.matches("t.csv:4: expected 3 fields, got 2", err)
    write(d .. "/m.csv", "a,b,label\n1,2,x\n3,,y\n")
    ok, err = pcall(D.CSVDataset, d .. "/m.csv")
    assert.is_false(ok)
    assert.matches("m.csv:3: column 'b': missing value", err)
    write(d .. "/n.csv", "a,b,label\n1,2,x\nabc,4,y\n")
    ok, err = pcall(D.CSVDataset, d .. "/n.csv")
    assert.is_false(ok)
    assert.matches("n.csv:3: column 'a': not a number: 'abc'", err)
  end)

  it("an undecodable image names its path", function()
    local d = tmpdir()
    os.execute("mkdir -p " .. d .. "/cat " .. d .. "/dog")
    data.image.write_png(d .. "/cat/a.png", torch.zeros(4, 4, { dtype = torch.uint8 }))
    write(d .. "/dog/b.png", "\137PNG\r\n\26\nnot really")
    local ds = D.ImageFolder(d)
    assert.same({ "cat", "dog" }, ds.classes)
    assert.same({ 4, 4, 1 }, { ds:get(0)[1]:size(0), ds:get(0)[1]:size(1), ds:get(0)[1]:size(2) })
    local ok, err = pcall(ds.get, ds, 1)
    assert.is_false(ok)
    assert.matches("dog/b.png: cannot decode image", err)
  end)
end)

describe("datasets", function()
  it("CSV: header, column selection, categorical target, TSV, missing = skip", function()
    local d = tmpdir()
    write(d .. "/p.tsv", "island\tmass\tlen\tspecies\nA\t3.5\t40\tAdelie\nB\t4.2\t\tGentoo\nA\t3.9\t41\tGentoo\n")
    local ds = D.CSVDataset(d .. "/p.tsv", { columns = { "island", "len" }, categorical = { "island" }, on_missing = "skip" })
    assert.equal(2, ds:len())
    assert.same({ "island", "len" }, ds.columns)
    assert.same({ { 0, 40 }, { 0, 41 } }, ds.features:tolist())
    assert.same({ 0, 1 }, ds.targets:tolist())
    assert.same({ "Adelie", "Gentoo" }, ds.categories.species.names)
  end)

  it("sklearn tables from python3-sklearn", function()
    local iris = D.SklearnDataset("iris")
    assert.equal(150, iris:len())
    assert.same({ 150, 4 }, { iris.features:size(0), iris.features:size(1) })
    assert.same({ "setosa", "versicolor", "virginica" }, iris.classes)
    assert.equal(569, D.SklearnDataset("breast_cancer"):len())
    assert.equal(178, D.SklearnDataset("wine"):len())
    local ok, err = pcall(D.SklearnDataset, "iris", { root = "/nonexistent" })
    assert.is_false(ok)
    assert.matches("python3%-sklearn", err)
    assert.matches("fetch_datasets.sh", err)
  end)

  it("fortunes language corpus", function()
    local ds = D.Fortunes({ languages = { "en", "de" }, max_per_language = 100 })
    assert.equal(200, ds:len())
    assert.equal(1, ds:get(150)[2])
    local ok, err = pcall(D.Fortunes, { languages = { "xx" } })
    assert.is_false(ok)
    assert.matches("no 'xx' fortune files", err)
  end)

  it("Fashion-MNIST via the dataset class", function()
    local ds = D.FashionMNIST("test")
    assert.equal(10000, ds:len())
    assert.equal(9, ds:get(0)[2])
    assert.is_table(ds.factory)
  end)

  it("ImageFolder through a DataLoader with two workers", function()
    local d = tmpdir()
    local images = D.FashionMNIST("test").images
    for c = 0, 1 do
      os.execute(("mkdir -p %s/%d"):format(d, c))
      for i = 0, 9 do data.image.write_png(("%s/%d/%d.png"):format(d, c, i), images:select(0, c * 10 + i)) end
    end
    local tf = T.Compose({ T.ToTensor(), T.RandomCrop(24, { padding = 0 }), T.RandomHorizontalFlip() })
    local ds = D.ImageFolder(d, { transform = tf, channels = 1 })
    local function run(nw)
      local out = {}
      for b in data.DataLoader(ds, { batch_size = 5, shuffle = true, generator = 3, num_workers = nw }):iter() do
        out[#out + 1] = b
      end
      return out
    end
    local a, b = run(0), run(1)
    assert.equal(4, #b)
    assert.same({ 5, 1, 24, 24 }, { b[1][1]:size(0), b[1][1]:size(1), b[1][1]:size(2), b[1][1]:size(3) })
    -- num_workers = 0 and 1 seed the transform generator the same way
    for k = 1, 4 do assert.is_true(torch.equal(a[k][1], b[k][1])) end
  end)
end)

describe("transforms and tokenizer", function()
  it("ToTensor + Normalize", function()
    local x = torch.tensor({ { 0, 255 } }, { dtype = torch.uint8 })
    local y = T.Compose({ T.ToTensor(), T.Normalize({ 0.5 }, { 0.5 }) })(x)
    assert.same({ { { -1, 1 } } }, y:tolist())
  end)

  it("specs rebuild transforms", function()
    local t = T.Compose({ T.ToTensor(), T.Normalize({ 0.5 }, { 0.25 }) })
    local u = T.from_spec(t.spec)
    local x = torch.tensor({ { 10, 200 } }, { dtype = torch.uint8 })
    assert.is_true(torch.equal(t(x), u(x)))
  end)

  it("char and word tokenizers: vocab, encode/decode, pad + mask", function()
    local tok = data.tokenizer.Tokenizer({ level = "word" }):build({ "the cat sat.", "the dog" })
    assert.equal(0, tok.stoi["<pad>"])
    assert.equal(4, tok.stoi["the"])
    local ids = tok:encode("the cat ran")
    assert.equal(tok.unk_id, ids[3])
    assert.equal("the cat", tok:decode(tok:encode("the cat")))
    local x, m = tok:batch({ "the cat sat.", "dog" })
    assert.same({ 2, 4 }, { x:size(0), x:size(1) })
    assert.same({ true, false, false, false }, m:tolist()[2])
    local ch = data.tokenizer.Tokenizer({ level = "char" }):build({ "héllo" })
    assert.equal("héllo", ch:decode(ch:encode("héllo")))
  end)
end)
