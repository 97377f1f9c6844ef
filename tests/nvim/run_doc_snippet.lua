-- Loaded after a configuration snippet of docs/editors/neovim.md (tests/test_neovim.py): open a
-- Python file as a user would, wait for the torch2ms diagnostics the snippet's client brings,
-- and write what Neovim shows to TORCH2MS_OUT as JSON. The snippet itself is not changed.
local file = os.getenv('TORCH2MS_FILE')
local out = os.getenv('TORCH2MS_OUT')
vim.cmd('filetype on')
vim.cmd('edit ' .. vim.fn.fnameescape(file))
local bufnr = vim.api.nvim_get_current_buf()
local ok = vim.wait(90000, function() return #vim.diagnostic.get(bufnr) > 0 end, 100)
local report = { ok = ok, clients = {}, diagnostics = {} }
for _, client in pairs(vim.lsp.buf_get_clients(bufnr)) do
  table.insert(report.clients, { name = client.name, cmd = client.config.cmd })
end
for _, d in ipairs(vim.diagnostic.get(bufnr)) do
  table.insert(report.diagnostics, { code = d.code or ((d.user_data or {}).lsp or {}).code, lnum = d.lnum,
                                     source = d.source })
end
local handle = io.open(out, 'w')
handle:write(vim.fn.json_encode(report))
handle:close()
vim.cmd('qall!')
