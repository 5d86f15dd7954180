package code

// JVM opcodes (JVMS chapter 6).
const (
	NOP             Opcode = 0x00
	ACONST_NULL     Opcode = 0x01
	ICONST_M1       Opcode = 0x02
	ICONST_0        Opcode = 0x03
	ICONST_1        Opcode = 0x04
	ICONST_2        Opcode = 0x05
	ICONST_3        Opcode = 0x06
	ICONST_4        Opcode = 0x07
	ICONST_5        Opcode = 0x08
	LCONST_0        Opcode = 0x09
	LCONST_1        Opcode = 0x0a
	FCONST_0        Opcode = 0x0b
	FCONST_1        Opcode = 0x0c
	FCONST_2        Opcode = 0x0d
	DCONST_0        Opcode = 0x0e
	DCONST_1        Opcode = 0x0f
	BIPUSH          Opcode = 0x10
	SIPUSH          Opcode = 0x11
	LDC             Opcode = 0x12
	LDC_W           Opcode = 0x13
	LDC2_W          Opcode = 0x14
	ILOAD           Opcode = 0x15
	LLOAD           Opcode = 0x16
	FLOAD           Opcode = 0x17
	DLOAD           Opcode = 0x18
	ALOAD           Opcode = 0x19
	ILOAD_0         Opcode = 0x1a
	ILOAD_1         Opcode = 0x1b
	ILOAD_2         Opcode = 0x1c
	ILOAD_3         Opcode = 0x1d
	LLOAD_0         Opcode = 0x1e
	LLOAD_1         Opcode = 0x1f
	LLOAD_2         Opcode = 0x20
	LLOAD_3         Opcode = 0x21
	FLOAD_0         Opcode = 0x22
	FLOAD_1         Opcode = 0x23
	FLOAD_2         Opcode = 0x24
	FLOAD_3         Opcode = 0x25
	DLOAD_0         Opcode = 0x26
	DLOAD_1         Opcode = 0x27
	DLOAD_2         Opcode = 0x28
	DLOAD_3         Opcode = 0x29
	ALOAD_0         Opcode = 0x2a
	ALOAD_1         Opcode = 0x2b
	ALOAD_2         Opcode = 0x2c
	ALOAD_3         Opcode = 0x2d
	IALOAD          Opcode = 0x2e
	LALOAD          Opcode = 0x2f
	FALOAD          Opcode = 0x30
	DALOAD          Opcode = 0x31
	AALOAD          Opcode = 0x32
	BALOAD          Opcode = 0x33
	CALOAD          Opcode = 0x34
	SALOAD          Opcode = 0x35
	ISTORE          Opcode = 0x36
	LSTORE          Opcode = 0x37
	FSTORE          Opcode = 0x38
	DSTORE          Opcode = 0x39
	ASTORE          Opcode = 0x3a
	ISTORE_0        Opcode = 0x3b
	ISTORE_1        Opcode = 0x3c
	ISTORE_2        Opcode = 0x3d
	ISTORE_3        Opcode = 0x3e
	LSTORE_0        Opcode = 0x3f
	LSTORE_1        Opcode = 0x40
	LSTORE_2        Opcode = 0x41
	LSTORE_3        Opcode = 0x42
	FSTORE_0        Opcode = 0x43
	FSTORE_1        Opcode = 0x44
	FSTORE_2        Opcode = 0x45
	FSTORE_3        Opcode = 0x46
	DSTORE_0        Opcode = 0x47
	DSTORE_1        Opcode = 0x48
	DSTORE_2        Opcode = 0x49
	DSTORE_3        Opcode = 0x4a
	ASTORE_0        Opcode = 0x4b
	ASTORE_1        Opcode = 0x4c
	ASTORE_2        Opcode = 0x4d
	ASTORE_3        Opcode = 0x4e
	IASTORE         Opcode = 0x4f
	LASTORE         Opcode = 0x50
	FASTORE         Opcode = 0x51
	DASTORE         Opcode = 0x52
	AASTORE         Opcode = 0x53
	BASTORE         Opcode = 0x54
	CASTORE         Opcode = 0x55
	SASTORE         Opcode = 0x56
	POP             Opcode = 0x57
	POP2            Opcode = 0x58
	DUP             Opcode = 0x59
	DUP_X1          Opcode = 0x5a
	DUP_X2          Opcode = 0x5b
	DUP2            Opcode = 0x5c
	DUP2_X1         Opcode = 0x5d
	DUP2_X2         Opcode = 0x5e
	SWAP            Opcode = 0x5f
	IADD            Opcode = 0x60
	LADD            Opcode = 0x61
	FADD            Opcode = 0x62
	DADD            Opcode = 0x63
	ISUB            Opcode = 0x64
	LSUB            Opcode = 0x65
	FSUB            Opcode = 0x66
	DSUB            Opcode = 0x67
	IMUL            Opcode = 0x68
	LMUL            Opcode = 0x69
	FMUL            Opcode = 0x6a
	DMUL            Opcode = 0x6b
	IDIV            Opcode = 0x6c
	LDIV            Opcode = 0x6d
	FDIV            Opcode = 0x6e
	DDIV            Opcode = 0x6f
	IREM            Opcode = 0x70
	LREM            Opcode = 0x71
	FREM            Opcode = 0x72
	DREM            Opcode = 0x73
	INEG            Opcode = 0x74
	LNEG            Opcode = 0x75
	FNEG            Opcode = 0x76
	DNEG            Opcode = 0x77
	ISHL            Opcode = 0x78
	LSHL            Opcode = 0x79
	ISHR            Opcode = 0x7a
	LSHR            Opcode = 0x7b
	IUSHR           Opcode = 0x7c
	LUSHR           Opcode = 0x7d
	IAND            Opcode = 0x7e
	LAND            Opcode = 0x7f
	IOR             Opcode = 0x80
	LOR             Opcode = 0x81
	IXOR            Opcode = 0x82
	LXOR            Opcode = 0x83
	IINC            Opcode = 0x84
	I2L             Opcode = 0x85
	I2F             Opcode = 0x86
	I2D             Opcode = 0x87
	L2I             Opcode = 0x88
	L2F             Opcode = 0x89
	L2D             Opcode = 0x8a
	F2I             Opcode = 0x8b
	F2L             Opcode = 0x8c
	F2D             Opcode = 0x8d
	D2I             Opcode = 0x8e
	D2L             Opcode = 0x8f
	D2F             Opcode = 0x90
	I2B             Opcode = 0x91
	I2C             Opcode = 0x92
	I2S             Opcode = 0x93
	LCMP            Opcode = 0x94
	FCMPL           Opcode = 0x95
	FCMPG           Opcode = 0x96
	DCMPL           Opcode = 0x97
	DCMPG           Opcode = 0x98
	IFEQ            Opcode = 0x99
	IFNE            Opcode = 0x9a
	IFLT            Opcode = 0x9b
	IFGE            Opcode = 0x9c
	IFGT            Opcode = 0x9d
	IFLE            Opcode = 0x9e
	IF_ICMPEQ       Opcode = 0x9f
	IF_ICMPNE       Opcode = 0xa0
	IF_ICMPLT       Opcode = 0xa1
	IF_ICMPGE       Opcode = 0xa2
	IF_ICMPGT       Opcode = 0xa3
	IF_ICMPLE       Opcode = 0xa4
	IF_ACMPEQ       Opcode = 0xa5
	IF_ACMPNE       Opcode = 0xa6
	GOTO            Opcode = 0xa7
	JSR             Opcode = 0xa8
	RET             Opcode = 0xa9
	TABLESWITCH     Opcode = 0xaa
	LOOKUPSWITCH    Opcode = 0xab
	IRETURN         Opcode = 0xac
	LRETURN         Opcode = 0xad
	FRETURN         Opcode = 0xae
	DRETURN         Opcode = 0xaf
	ARETURN         Opcode = 0xb0
	RETURN          Opcode = 0xb1
	GETSTATIC       Opcode = 0xb2
	PUTSTATIC       Opcode = 0xb3
	GETFIELD        Opcode = 0xb4
	PUTFIELD        Opcode = 0xb5
	INVOKEVIRTUAL   Opcode = 0xb6
	INVOKESPECIAL   Opcode = 0xb7
	INVOKESTATIC    Opcode = 0xb8
	INVOKEINTERFACE Opcode = 0xb9
	INVOKEDYNAMIC   Opcode = 0xba
	NEW             Opcode = 0xbb
	NEWARRAY        Opcode = 0xbc
	ANEWARRAY       Opcode = 0xbd
	ARRAYLENGTH     Opcode = 0xbe
	ATHROW          Opcode = 0xbf
	CHECKCAST       Opcode = 0xc0
	INSTANCEOF      Opcode = 0xc1
	MONITORENTER    Opcode = 0xc2
	MONITOREXIT     Opcode = 0xc3
	WIDE            Opcode = 0xc4
	MULTIANEWARRAY  Opcode = 0xc5
	IFNULL          Opcode = 0xc6
	IFNONNULL       Opcode = 0xc7
	GOTO_W          Opcode = 0xc8
	JSR_W           Opcode = 0xc9
	BREAKPOINT      Opcode = 0xca
	IMPDEP1         Opcode = 0xfe
	IMPDEP2         Opcode = 0xff
)

var opNames = [256]string{
	0x00: "nop",
	0x01: "aconst_null",
	0x02: "iconst_m1",
	0x03: "iconst_0",
	0x04: "iconst_1",
	0x05: "iconst_2",
	0x06: "iconst_3",
	0x07: "iconst_4",
	0x08: "iconst_5",
	0x09: "lconst_0",
	0x0a: "lconst_1",
	0x0b: "fconst_0",
	0x0c: "fconst_1",
	0x0d: "fconst_2",
	0x0e: "dconst_0",
	0x0f: "dconst_1",
	0x10: "bipush",
	0x11: "sipush",
	0x12: "ldc",
	0x13: "ldc_w",
	0x14: "ldc2_w",
	0x15: "iload",
	0x16: "lload",
	0x17: "fload",
	0x18: "dload",
	0x19: "aload",
	0x1a: "iload_0",
	0x1b: "iload_1",
	0x1c: "iload_2",
	0x1d: "iload_3",
	0x1e: "lload_0",
	0x1f: "lload_1",
	0x20: "lload_2",
	0x21: "lload_3",
	0x22: "fload_0",
	0x23: "fload_1",
	0x24: "fload_2",
	0x25: "fload_3",
	0x26: "dload_0",
	0x27: "dload_1",
	0x28: "dload_2",
	0x29: "dload_3",
	0x2a: "aload_0",
	0x2b: "aload_1",
	0x2c: "aload_2",
	0x2d: "aload_3",
	0x2e: "iaload",
	0x2f: "laload",
	0x30: "faload",
	0x31: "daload",
	0x32: "aaload",
	0x33: "baload",
	0x34: "caload",
	0x35: "saload",
	0x36: "istore",
	0x37: "lstore",
	0x38: "fstore",
	0x39: "dstore",
	0x3a: "astore",
	0x3b: "istore_0",
	0x3c: "istore_1",
	0x3d: "istore_2",
	0x3e: "istore_3",
	0x3f: "lstore_0",
	0x40: "lstore_1",
	0x41: "lstore_2",
	0x42: "lstore_3",
	0x43: "fstore_0",
	0x44: "fstore_1",
	0x45: "fstore_2",
	0x46: "fstore_3",
	0x47: "dstore_0",
	0x48: "dstore_1",
	0x49: "dstore_2",
	0x4a: "dstore_3",
	0x4b: "astore_0",
	0x4c: "astore_1",
	0x4d: "astore_2",
	0x4e: "astore_3",
	0x4f: "iastore",
	0x50: "lastore",
	0x51: "fastore",
	0x52: "dastore",
	0x53: "aastore",
	0x54: "bastore",
	0x55: "castore",
	0x56: "sastore",
	0x57: "pop",
	0x58: "pop2",
	0x59: "dup",
	0x5a: "dup_x1",
	0x5b: "dup_x2",
	0x5c: "dup2",
	0x5d: "dup2_x1",
	0x5e: "dup2_x2",
	0x5f: "swap",
	0x60: "iadd",
	0x61: "ladd",
	0x62: "fadd",
	0x63: "dadd",
	0x64: "isub",
	0x65: "lsub",
	0x66: "fsub",
	0x67: "dsub",
	0x68: "imul",
	0x69: "lmul",
	0x6a: "fmul",
	0x6b: "dmul",
	0x6c: "idiv",
	0x6d: "ldiv",
	0x6e: "fdiv",
	0x6f: "ddiv",
	0x70: "irem",
	0x71: "lrem",
	0x72: "frem",
	0x73: "drem",
	0x74: "ineg",
	0x75: "lneg",
	0x76: "fneg",
	0x77: "dneg",
	0x78: "ishl",
	0x79: "lshl",
	0x7a: "ishr",
	0x7b: "lshr",
	0x7c: "iushr",
	0x7d: "lushr",
	0x7e: "iand",
	0x7f: "land",
	0x80: "ior",
	0x81: "lor",
	0x82: "ixor",
	0x83: "lxor",
	0x84: "iinc",
	0x85: "i2l",
	0x86: "i2f",
	0x87: "i2d",
	0x88: "l2i",
	0x89: "l2f",
	0x8a: "l2d",
	0x8b: "f2i",
	0x8c: "f2l",
	0x8d: "f2d",
	0x8e: "d2i",
	0x8f: "d2l",
	0x90: "d2f",
	0x91: "i2b",
	0x92: "i2c",
	0x93: "i2s",
	0x94: "lcmp",
	0x95: "fcmpl",
	0x96: "fcmpg",
	0x97: "dcmpl",
	0x98: "dcmpg",
	0x99: "ifeq",
	0x9a: "ifne",
	0x9b: "iflt",
	0x9c: "ifge",
	0x9d: "ifgt",
	0x9e: "ifle",
	0x9f: "if_icmpeq",
	0xa0: "if_icmpne",
	0xa1: "if_icmplt",
	0xa2: "if_icmpge",
	0xa3: "if_icmpgt",
	0xa4: "if_icmple",
	0xa5: "if_acmpeq",
	0xa6: "if_acmpne",
	0xa7: "goto",
	0xa8: "jsr",
	0xa9: "ret",
	0xaa: "tableswitch",
	0xab: "lookupswitch",
	0xac: "ireturn",
	0xad: "lreturn",
	0xae: "freturn",
	0xaf: "dreturn",
	0xb0: "areturn",
	0xb1: "return",
	0xb2: "getstatic",
	0xb3: "putstatic",
	0xb4: "getfield",
	0xb5: "putfield",
	0xb6: "invokevirtual",
	0xb7: "invokespecial",
	0xb8: "invokestatic",
	0xb9: "invokeinterface",
	0xba: "invokedynamic",
	0xbb: "new",
	0xbc: "newarray",
	0xbd: "anewarray",
	0xbe: "arraylength",
	0xbf: "athrow",
	0xc0: "checkcast",
	0xc1: "instanceof",
	0xc2: "monitorenter",
	0xc3: "monitorexit",
	0xc4: "wide",
	0xc5: "multianewarray",
	0xc6: "ifnull",
	0xc7: "ifnonnull",
	0xc8: "goto_w",
	0xc9: "jsr_w",
	0xca: "breakpoint",
	0xfe: "impdep1",
	0xff: "impdep2",
}
