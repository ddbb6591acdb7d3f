/* nosym_ascend.c: a test shared object without the xp_adapter_ascend symbol. */
int xp_not_an_adapter(void);
int xp_not_an_adapter(void)
{
	return 42;
}
