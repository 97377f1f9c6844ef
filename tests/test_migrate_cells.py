"""forward -> construct in the classes that become Cells: names located on the ast, written in place."""

from __future__ import annotations

import textwrap

from torch2ms.migrate.transform import Cells

TEXT = textwrap.dedent('''\
    class Net(Base):
        @staticmethod
        def helper(x):
            return x

        def forward(self, x):
            label = "größe"; y = self.forward
            return super(Net, self).forward(x) + y(x)

        class Inner:  # not a Cell: its forward stays
            def forward(self):
                return self.forward


    class Both(Base):
        def forward(self, x):
            return x

        def construct(self, x):
            return self.forward(x)


    def forward(x):
        return x.forward
''')


def test_renames_only_inside_cells_with_non_ascii_text_before_the_name() -> None:
    cells = Cells({"Net", "Both"}, "mindspore")
    out = cells.rewrite(TEXT)
    assert '    def construct(self, x):\n        label = "größe"; y = self.construct\n' in out
    assert "return super(Net, self).construct(x) + y(x)" in out
    assert "        def forward(self):\n            return self.forward\n" in out  # Inner
    assert "    def forward(self, x):\n        return x\n\n    def construct(self, x):\n        return self.forward(x)" \
        in out  # Both defines both: left as it is
    assert out.endswith("def forward(x):\n    return x.forward\n")
    assert cells.count == 3
    assert cells.done == ["7: forward reference -> construct", "8: forward reference -> construct",
                          "6: forward -> construct"]
    assert len(out) == len(TEXT) + 3 * (len("construct") - len("forward"))
