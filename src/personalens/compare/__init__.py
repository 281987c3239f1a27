"""`personalens compare`: several runs of one lens command side by side, in the paper's
layout, with paired tests between every two systems. Above the lenses (it reads each lens's
`Comparison`), below the CLI."""
