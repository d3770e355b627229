"""Pure domain rules Topolens applies to mirrored data (no database, no Django): which state
each logical CPU is in (`cpu_classify`), resctrl QoS as koordlet applies it (`resctrl`)."""
